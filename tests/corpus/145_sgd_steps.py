# three plain SGD steps on a linear regression: forward, backward, step; loss and weights after each step
from tinygrad import Tensor, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import SGD
x = Tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
y = Tensor([[1.0], [2.0], [3.0]])
w = Tensor([[0.1], [-0.2]])
b = Tensor([0.05])
opt = SGD([w, b], lr=0.01)
losses = []
with Context(TRAINING=1):
  for _ in range(3):
    opt.zero_grad()
    loss = ((x.matmul(w) + b - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
RESULT = {"losses": losses, "w": w.tolist(), "b": b.tolist()}
print(RESULT)
