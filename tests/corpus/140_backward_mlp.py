# backward through matmul + bias + relu + sum: .grad of inputs, weights, bias and the intermediate
from tinygrad import Tensor
x = Tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
w = Tensor([[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]])
b = Tensor([0.1, -0.2])
y = (x.matmul(w) + b).relu()
loss = y.sum()
loss.backward()
RESULT = {"x": x.grad.tolist(), "w": w.grad.tolist(), "b": b.grad.tolist(), "y": y.grad.tolist(), "loss": loss.grad.tolist()}
print(RESULT)
