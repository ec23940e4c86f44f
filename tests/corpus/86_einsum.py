# einsum: matmul, batched, trace, outer product, transpose + sum
from tinygrad import Tensor
a = Tensor([[float(i * 3 + j) for j in range(3)] for i in range(2)]).realize()
b = Tensor([[float((i + 2 * j) % 4) for j in range(4)] for i in range(3)]).realize()
sq = Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]).realize()
RESULT = {"mm": Tensor.einsum("ij,jk->ik", a, b).tolist(), "tr": Tensor.einsum("ii", sq).item(),
          "outer": Tensor.einsum("i,j->ij", a[0], b[0]).tolist(), "t": Tensor.einsum("ij->ji", a).tolist(),
          "rowsum": Tensor.einsum("ij->i", b).tolist()}
print(RESULT)
