# BatchNorm in training mode: backward through the batch statistics, running stats updated, then an SGD step
from tinygrad import Tensor, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import SGD
bn = nn.BatchNorm2d(2)
x = Tensor([[[[1.0, 2.0], [3.0, 4.0]], [[0.5, -0.5], [1.5, 2.5]]], [[[0.0, 1.0], [-1.0, 2.0]], [[2.0, 1.0], [0.0, -1.0]]]])
opt = SGD([bn.weight, bn.bias, bn.running_mean, bn.running_var], lr=0.5)
with Context(TRAINING=1):
  opt.zero_grad()
  loss = (bn(x) * Tensor([1.0, 2.0]).reshape(1, 2, 1, 1) * x).sum()
  loss.backward()
  opt.step()
RESULT = {"loss": loss.item(), "w": bn.weight.tolist(), "b": bn.bias.tolist(), "rm": bn.running_mean.tolist(), "rv": bn.running_var.tolist()}
print(RESULT)
