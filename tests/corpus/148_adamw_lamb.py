# AdamW (decoupled weight decay) and LAMB (trust ratio) for two steps each
from tinygrad import Tensor
from tinygrad.helpers import Context
from tinygrad.nn.optim import AdamW, LAMB
out = {}
for name, mk in [("adamw", lambda ps: AdamW(ps, lr=0.1, weight_decay=0.1)), ("lamb", lambda ps: LAMB(ps, lr=0.1, weight_decay=0.01))]:
  w = Tensor([[1.0, -2.0], [0.5, 0.25]])
  opt = mk([w])
  with Context(TRAINING=1):
    for _ in range(2):
      opt.zero_grad()
      loss = (w.matmul(Tensor([[1.0], [2.0]])).square()).sum()
      loss.backward()
      opt.step()
  out[name] = w.tolist()
RESULT = out
print(RESULT)
