# a centered square: mean broadcast back, squared, summed (variance-like chain)
from tinygrad import Tensor
x = Tensor([[float((i * 5 + j) % 9) for j in range(5)] for i in range(4)]).realize()
c = x - x.mean(axis=1, keepdim=True)
RESULT = {"c2": (c * c).sum(axis=1).tolist(), "colmax": x.max(axis=0).tolist()}
print(RESULT)
