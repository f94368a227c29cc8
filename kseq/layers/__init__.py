"""Keras layers of kseq (all registered serializable under the `kseq` package)."""

from kseq.layers.feed_forward import FeedForward
from kseq.layers.multi_head_self_attention import MultiHeadSelfAttention
from kseq.layers.position_embedding import LearnedPositionEmbedding, SinusoidalPositionEmbedding
from kseq.layers.token_embedding import TokenEmbedding
from kseq.layers.transformer_decoder_block import TransformerDecoderBlock
from kseq.layers.transformer_encoder_block import TransformerEncoderBlock
from kseq.layers.bahdanau_attention import BahdanauAttention
from kseq.layers.luong_attention import LuongAttention
from kseq.layers.attention_decoder import AttentionDecoder
from kseq.layers.attention_decoder_cell import AttentionDecoderCell
from kseq.layers.gated_convolution import GatedConvolution
from kseq.layers.conv_encoder_block import ConvEncoderBlock
from kseq.layers.conv_decoder_block import ConvDecoderBlock
from kseq.layers.small_cnn import SmallCnn
from kseq.layers.application_backbone import ApplicationBackbone
from kseq.layers.efficientnet_lite0 import EfficientNetLite0
from kseq.layers.grid_position_embedding import GridPositionEmbedding
from kseq.layers.sequence_pooling import SequencePooling
