# devices: CPU
# sanitized: skip an RSS bound: AddressSanitizer keeps freed memory in quarantine and shadow memory on top
# timeout: 400
# 1,000 Adam steps of the training example's MLP stay under 300 MB; the losses match the reference's
import resource
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
  for step in range(1000):
    opt.zero_grad()
    loss = model(x).sparse_categorical_crossentropy(y)
    loss.backward()
    opt.step()
    if step % 250 == 0 or step == 999: print(f"step {step}: loss {loss.item():.3f}")
print("under 300 MB:", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 300 * 1024)
