# nn.LayerNorm backward (weight, bias and input) and layernorm over the last axis
from tinygrad import Tensor, nn
ln = nn.LayerNorm(4)
ln.weight = Tensor([1.0, 0.5, -1.0, 2.0]); ln.bias = Tensor([0.0, 0.1, 0.2, 0.3])
x = Tensor([[1.0, 2.0, 4.0, 7.0], [-1.0, 0.0, 1.0, 3.0]])
(ln(x) * Tensor([[1.0, -1.0, 2.0, 0.5], [0.0, 1.0, 1.0, -2.0]])).sum().backward()
RESULT = {"dx": x.grad.tolist(), "dw": ln.weight.grad.tolist(), "db": ln.bias.grad.tolist()}
print(RESULT)
