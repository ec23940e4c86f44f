# Tensor.layernorm over one and two axes, Tensor.batchnorm with per-channel stats and with a scalar invstd
from tinygrad import Tensor
x = Tensor([[[float((i * 3 + j * 5 + c) % 7) for j in range(4)] for i in range(3)] for c in range(2)]).realize()
m = Tensor([1.0, 2.0, 3.0]).realize()
iv = Tensor([0.5, 1.0, 2.0]).realize()
w = Tensor([1.0, -1.0, 0.5]).realize()
b = Tensor([0.0, 0.25, -0.25]).realize()
RESULT = {
  "ln": x.layernorm().tolist(),
  "ln2": x.layernorm(axis=(1, 2), eps=1e-3).tolist(),
  "bn": x.batchnorm(w, b, m, iv).tolist(),
  "bn_none": x.batchnorm(None, None, m, iv).tolist(),
}
print(RESULT)
