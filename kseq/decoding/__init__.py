"""Search over the step protocol: greedy, beam search, sampling."""

from kseq.decoding.beam_search import beam_search
from kseq.decoding.beam_search_decoder import BeamSearchDecoder
from kseq.decoding.greedy import greedy_search
from kseq.decoding.sampling import sample
