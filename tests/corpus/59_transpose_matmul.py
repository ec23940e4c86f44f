# transposed operand matmul and batched matmul
from tinygrad import Tensor
a = Tensor([[float(i * 3 + j) for j in range(3)] for i in range(4)]).realize()
b = Tensor([[[float((k + i * 2 + j) % 4) for j in range(2)] for i in range(3)] for k in range(2)]).realize()
RESULT = {"ata": (a.T @ a).tolist(), "batched": (a.reshape(1, 4, 3) @ b).tolist()}
print(RESULT)
