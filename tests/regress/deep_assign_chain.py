# devices: CPU INTERP VULKAN
# timeout: 300
# 30,000 unrealized assigns of one buffer, realized at once: 30,000 kernels of one program. Once a crash (the walks
# recursed), then quadratic three times over (each assign's store hazard walked every assign before it, its store's
# tag was found by counting up from 0, and each kernel was compiled again: the tag kept its AST apart); 10,000 took
# 115 s, now 1 s, and 100,000 take 22 s. The value is worked out by hand (the reference takes minutes past 2,000).
from tinygrad import Tensor
x = Tensor.zeros(3).contiguous().realize()
for _ in range(30000): x.assign(x + 1)
print(x.tolist())
y = Tensor.zeros(3, 2).contiguous().realize()
for i in range(3001): y[i % 3].assign(y[i % 3] + 1)
print(y.tolist())
