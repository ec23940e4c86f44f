# softmax and layernorm over long rows: every reduce of the fused kernels is grouped
from tinygrad import Tensor
x = Tensor([[((i * 31 + j * 17) % 23) / 5.0 for j in range(256)] for i in range(4)]).realize()
RESULT = {"softmax": x.softmax(-1)[:, :6].tolist(), "layernorm": x.layernorm()[:, :6].tolist(), "logsumexp": x.logsumexp(1).tolist()}
print(RESULT)
