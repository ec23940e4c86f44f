# error: more bytes than this machine can address
# devices: CPU
# a 2**62-element float buffer has 2**64 bytes: the reference raises OverflowError
from tinygrad import Tensor
Tensor.ones(1).expand(2**62).contiguous().realize()
