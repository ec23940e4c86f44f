# matmul + bias + relu fuse into one kernel; a vector-matrix product too
from tinygrad import Tensor
x = Tensor([[float((i * 5 + j) % 7 - 3) for j in range(5)] for i in range(6)]).realize()
w = Tensor([[float((i * 4 + j) % 5 - 2) for j in range(4)] for i in range(5)]).realize()
b = Tensor([0.5, -0.5, 1.0, -1.0]).realize()
v = Tensor([1.0, 2.0, 3.0, 4.0, 5.0]).realize()
RESULT = {"y": (x @ w + b).relu().tolist(), "vm": (v @ w).tolist()}
print(RESULT)
