"""`Part`: the base of encoders and decoders, layers made of sublayers."""

import keras


class Part(keras.layers.Layer):
    """A layer whose sublayers build themselves on their first call.

    Keras warns about a layer without `build` that holds unbuilt sublayers;
    here that is the design: a part is called through `call` by a task's
    functional graph (see `kseq.models.task`), or through `__call__` alone.
    """

    def build(self, *shapes, **kwargs):
        self.built = True
