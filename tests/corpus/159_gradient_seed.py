# gradient with an explicit seed (vector-Jacobian product) and backward of a non-scalar with a gradient argument
from tinygrad import Tensor
x = Tensor([[1.0, 2.0], [3.0, 4.0]])
w = Tensor([[0.5, -1.0], [1.5, 2.0]])
y = x.matmul(w)
gx, gw = y.gradient(x, w, gradient=Tensor([[1.0, 0.0], [0.0, 2.0]]))
z = (x * 2).exp()
z.backward(Tensor([[1.0, 1.0], [0.5, 0.0]]))
RESULT = {"gx": gx.tolist(), "gw": gw.tolist(), "xgrad": x.grad.tolist()}
print(RESULT)
