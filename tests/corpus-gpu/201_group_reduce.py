# reductions with small outputs: GROUPTOP splits the reduce over 16 lanes of a work-group (partials in local memory)
from tinygrad import Tensor
x = Tensor([[((i * 13 + j * 7) % 17) / 8.0 - 1.0 for j in range(512)] for i in range(8)]).realize()
y = Tensor([float((k * 29) % 31) for k in range(4096)]).realize()
RESULT = {"rowsum": x.sum(1).tolist(), "rowmax": x.max(1).tolist(), "total": y.sum().item(), "mean": y.mean().item(),
          "argmax": x.argmax(1).tolist(), "colsum": x.sum(0)[:8].tolist()}
print(RESULT)
