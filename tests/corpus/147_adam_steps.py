# Adam: three steps on a small two-layer net; moments and the bias correction powers live in buffers
from tinygrad import Tensor
from tinygrad.helpers import Context
from tinygrad.nn.optim import Adam
w1 = Tensor([[0.2, -0.1], [0.4, 0.3], [-0.5, 0.1]])
w2 = Tensor([[0.3], [-0.6]])
x = Tensor([[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]])
y = Tensor([[1.0], [-1.0]])
opt = Adam([w1, w2], lr=0.05)
losses = []
with Context(TRAINING=1):
  for _ in range(3):
    opt.zero_grad()
    loss = ((x.matmul(w1).tanh().matmul(w2) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
RESULT = {"losses": losses, "w1": w1.tolist(), "w2": w2.tolist()}
print(RESULT)
