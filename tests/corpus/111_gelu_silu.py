# gelu, silu, tanh, leaky_relu
from tinygrad import Tensor
x = Tensor([-2.0, -0.5, 0.0, 0.5, 2.0]).realize()
RESULT = {"gelu": x.gelu().tolist(), "silu": x.silu().tolist(), "tanh": x.tanh().tolist(), "lrelu": x.leaky_relu(0.1).tolist()}
print(RESULT)
