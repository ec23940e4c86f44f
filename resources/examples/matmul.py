# a 64x64 matmul: one kernel, upcast 4x4, unrolled reduce, two CPU threads
from tinygrad import Tensor
a = Tensor([[float((i * 64 + j) % 7 - 3) for j in range(64)] for i in range(64)]).realize()
b = Tensor([[float((i * 64 + j) % 5 - 2) for j in range(64)] for i in range(64)]).realize()
c = (a @ b).realize()
print(c.tolist()[0][:8])
