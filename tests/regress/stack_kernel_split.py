# the kernel split of a 100-tensor stack: at most 31 buffers a kernel (the reference's limit for CPU)
from tinygrad import Tensor
from tinygrad.helpers import GlobalCounters
ts = [Tensor([float(i), -float(i)]).realize() for i in range(100)]
GlobalCounters.reset()
s = Tensor.stack(*ts).realize()
print(GlobalCounters.kernel_count, s.sum().item(), s[57].tolist())
