# nn.Embedding forward (arange == idx one-hot, where, sum) with an explicit weight
from tinygrad import Tensor, nn, dtypes
emb = nn.Embedding(6, 3)
emb.weight = Tensor([[float(i * 3 + j) / 4 for j in range(3)] for i in range(6)])
idx = Tensor([[1, 5, 0], [2, 2, 4]], dtype=dtypes.int32)
RESULT = {"e": emb(idx).tolist(), "e1": emb(Tensor([3])).tolist()}
print(RESULT)
