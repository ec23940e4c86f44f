# triu/tril with diagonals, masked_fill, where with a causal mask
from tinygrad import Tensor
x = Tensor([[float(i * 4 + j + 1) for j in range(4)] for i in range(3)]).realize()
RESULT = {"triu": x.triu().tolist(), "triu1": x.triu(1).tolist(), "tril": x.tril().tolist(), "tril_m1": x.tril(-1).tolist(),
          "masked": x.masked_fill(x > 6, -1.0).tolist()}
print(RESULT)
