# matmuls whose outputs are small (grouped reduce) and a batched matmul
from tinygrad import Tensor
a = Tensor([[((i * 3 + j) % 7) / 7.0 for j in range(256)] for i in range(2)]).realize()
b = Tensor([[((i + j * 5) % 9) / 9.0 for j in range(3)] for i in range(256)]).realize()
c = Tensor([[[((i + j + k) % 5) / 5.0 for k in range(16)] for j in range(8)] for i in range(3)]).realize()
RESULT = {"ab": (a @ b).tolist(), "bmm": (c @ c.transpose(1, 2)).sum().item()}
print(RESULT)
