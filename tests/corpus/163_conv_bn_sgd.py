# Conv2d + BatchNorm2d (training statistics) + avg_pool2d + Linear head: one SGD step with momentum
from tinygrad import Tensor, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import SGD
from tinygrad.nn.state import get_parameters
c = nn.Conv2d(1, 2, 2, bias=False)
c.weight = Tensor([[[[0.5, -0.5], [0.25, 0.1]]], [[[-0.3, 0.2], [0.4, -0.1]]]])
bn = nn.BatchNorm2d(2)
head = nn.Linear(2, 2)
head.weight = Tensor([[0.3, -0.2], [0.1, 0.4]]); head.bias = Tensor([0.0, 0.1])
x = Tensor([[[[((i * 5 + b * 3) % 9 - 4) / 4 for i in range(16)]]] for b in range(2)]).reshape(2, 1, 4, 4)
t = Tensor([[1.0, 0.0], [0.0, 1.0]])
opt = SGD(get_parameters([c, bn, head]), lr=0.1, momentum=0.9)
with Context(TRAINING=1):
  opt.zero_grad()
  out = head(bn(c(x)).relu().avg_pool2d(kernel_size=(3, 3)).flatten(1))
  loss = (out - t).square().sum()
  loss.backward()
  opt.step()
RESULT = {"loss": loss.item(), "cw": c.weight.tolist(), "bnw": bn.weight.tolist(), "rm": bn.running_mean.tolist()}
print(RESULT)
