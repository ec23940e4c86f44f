# gradients through nn.Embedding (one-hot gather), cat, split and cumsum
from tinygrad import Tensor, nn
emb = nn.Embedding(5, 3)
emb.weight = Tensor([[float(i * 3 + j) / 10 for j in range(3)] for i in range(5)])
idx = Tensor([[1, 3], [3, 0]])
(emb(idx) * Tensor([1.0, 2.0, 3.0])).sum().backward()
a = Tensor([1.0, 2.0]); b = Tensor([3.0, 4.0, 5.0])
c = a.cat(b)
p, q = c.split([3, 2])
(p.cumsum(0) * Tensor([1.0, 2.0, 3.0])).sum().backward()
RESULT = {"demb": emb.weight.grad.tolist(), "da": a.grad.tolist(), "db": b.grad.tolist()}
print(RESULT)
