# a fused matmul + relu + row sum: two nested reduces in one kernel
from tinygrad import Tensor
a = Tensor([[float((i * 7 + j) % 5 - 2) for j in range(96)] for i in range(128)]).realize()
b = Tensor([[float((i * 3 + j) % 7 - 3) for j in range(80)] for i in range(96)]).realize()
y = (a @ b).relu().sum(axis=1)
RESULT = y.tolist()
print(RESULT[:4])
