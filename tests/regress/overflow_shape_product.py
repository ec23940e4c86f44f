# error: more elements than int64 can count
# devices: CPU
# 2**64 elements: the reference raises OverflowError (once printed 0.0 here)
from tinygrad import Tensor
print(Tensor.ones(1 << 32, 1 << 32).sum().item())
