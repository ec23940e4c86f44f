# one SGD training step of a small LeNet-style net (conv, relu, max_pool, linear) with an MSE loss; explicit weights
from tinygrad import Tensor, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import SGD
from tinygrad.nn.state import get_parameters
class Net:
  def __init__(self):
    self.c1 = nn.Conv2d(1, 2, 3)
    self.l1 = nn.Linear(8, 3)
    self.c1.weight = Tensor([[((i * 7 + j) % 5 - 2) / 10 for j in range(9)] for i in range(2)]).reshape(2, 1, 3, 3)
    self.c1.bias = Tensor([0.1, -0.1])
    self.l1.weight = Tensor([[((i * 5 + j) % 7 - 3) / 10 for j in range(8)] for i in range(3)])
    self.l1.bias = Tensor([0.0, 0.05, -0.05])
  def __call__(self, x): return self.l1(self.c1(x).relu().max_pool2d(2).flatten(1))
net = Net()
x = Tensor([[((i * 3) % 11 - 5) / 5 for i in range(36)], [((i * 5) % 13 - 6) / 6 for i in range(36)]]).reshape(2, 1, 6, 6)
y = Tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
opt = SGD(get_parameters(net), lr=0.1)
with Context(TRAINING=1):
  opt.zero_grad()
  loss = ((net(x) - y) ** 2).mean()
  loss.backward()
  opt.step()
RESULT = {"loss": loss.item(), "c1w": net.c1.weight.tolist(), "l1b": net.l1.bias.tolist()}
print(RESULT)
