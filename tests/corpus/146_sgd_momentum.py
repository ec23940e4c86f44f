# SGD with momentum, nesterov and weight decay on nn.Linear layers with explicit weights
from tinygrad import Tensor, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import SGD
from tinygrad.nn.state import get_parameters
l1 = nn.Linear(3, 4); l2 = nn.Linear(4, 2)
l1.weight = Tensor([[0.1, -0.2, 0.3], [0.0, 0.5, -0.5], [0.2, 0.2, 0.2], [-0.3, 0.1, 0.0]])
l1.bias = Tensor([0.0, 0.1, -0.1, 0.2])
l2.weight = Tensor([[0.3, -0.1, 0.2, 0.4], [-0.2, 0.3, 0.1, 0.0]])
l2.bias = Tensor([0.05, -0.05])
x = Tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 2.0]])
t = Tensor([[1.0, 0.0], [0.0, 1.0]])
opt = SGD(get_parameters([l1, l2]), lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
losses = []
with Context(TRAINING=1):
  for _ in range(3):
    opt.zero_grad()
    loss = ((l2(l1(x).relu()) - t) ** 2).sum()
    loss.backward()
    opt.step()
    losses.append(loss.item())
RESULT = {"losses": losses, "w1": l1.weight.tolist(), "b2": l2.bias.tolist()}
print(RESULT)
