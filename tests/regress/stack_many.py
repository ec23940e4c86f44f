# devices: CPU
# timeout: 400
# stack of 2,000 tensors: kernels read at most 30 inputs as in the reference (once one kernel with 2,000 inputs,
# whose compile time grew with the count); the values by hand: sum of 2i + 0.5 over i < 2000
from tinygrad import Tensor
ts = [Tensor([float(i), float(i) + 0.5]) for i in range(2000)]
s = Tensor.stack(*ts)
print(s.sum().item(), s[1234].tolist(), s.shape)
