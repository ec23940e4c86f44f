# a small MLP forward pass: the hidden layer is realized because it is broadcast into the second matmul
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]])
w1 = Tensor([[0.1, -0.2, 0.3, 0.0], [0.5, 0.5, -0.5, 1.0], [-0.25, 0.75, 0.0, 0.5]])
b1 = Tensor([0.0, 0.1, -0.1, 0.2])
w2 = Tensor([[1.0, -1.0], [0.5, 0.5], [-1.0, 2.0], [0.25, 0.0]])
b2 = Tensor([0.05, -0.05])
h = (x @ w1 + b1).relu()
print((h @ w2 + b2).softmax().tolist())
