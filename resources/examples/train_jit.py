# a training loop under TinyJit: the first step runs as usual, the second is captured (its schedules kept, its kernels
# compiled once), and every later step replays those calls with the new batch: no scheduling, no codegen. DEBUG=2
# prints the replayed calls with magenta headers.
from tinygrad import Tensor, TinyJit, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import Adam
from tinygrad.nn.state import get_parameters

Tensor.manual_seed(0)
class MLP:
  def __init__(self):
    self.l1 = nn.Linear(4, 16)
    self.l2 = nn.Linear(16, 3)
  def __call__(self, x): return self.l2(self.l1(x).relu())

model = MLP()
opt = Adam(get_parameters(model), lr=0.05)

@TinyJit
def train_step(x, y):
  with Context(TRAINING=1):
    opt.zero_grad()
    loss = model(x).sparse_categorical_crossentropy(y).backward()
    opt.step()
  return loss.realize()

# a toy task: the class is the index of the largest of the first three features
for step in range(6):
  x = Tensor.randn(32, 4)
  y = x[:, :3].argmax(axis=1)
  print(f"step {step}: loss {train_step(x, y).item():.4f}")
