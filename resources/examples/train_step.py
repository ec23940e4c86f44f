# a training step: loss.backward() builds the gradient graph from the (still lazy) forward graph; realizing the loss is
# the forward schedule, opt.step() the backward one (gradients and Adam's updates), which recomputes what it needs
from tinygrad import Tensor, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import Adam
from tinygrad.nn.state import get_parameters

Tensor.manual_seed(0)
class MLP:
  def __init__(self):
    self.l1 = nn.Linear(4, 8)
    self.l2 = nn.Linear(8, 3)
  def __call__(self, x): return self.l2(self.l1(x).relu())

model = MLP()
opt = Adam(get_parameters(model), lr=0.05)
x = Tensor([[0.5, -1.0, 2.0, 0.0], [1.0, 1.0, -1.0, 0.5], [-0.5, 0.25, 0.0, 1.5], [2.0, 0.0, 0.5, -1.0]])
y = Tensor([2, 0, 1, 0])

with Context(TRAINING=1):
  for step in range(3):
    opt.zero_grad()
    loss = model(x).sparse_categorical_crossentropy(y)
    loss.backward()  # the gradient graph, lazy
    loss.realize()   # forward kernels
    opt.step()       # backward kernels and the update
    print(f"step {step}: loss {loss.item():.4f}")
