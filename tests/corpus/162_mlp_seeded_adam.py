# a seeded MLP classifier (nn.Linear default init from manual_seed) trained for two Adam steps with sparse_categorical_crossentropy
from tinygrad import Tensor, nn
from tinygrad.helpers import Context
from tinygrad.nn.optim import Adam
from tinygrad.nn.state import get_parameters
Tensor.manual_seed(3)
l1, l2 = nn.Linear(4, 8), nn.Linear(8, 3)
x = Tensor([[0.5, -1.0, 2.0, 0.0], [1.0, 1.0, -1.0, 0.5], [-0.5, 0.25, 0.0, 1.5]])
y = Tensor([2, 0, 1])
opt = Adam(get_parameters([l1, l2]), lr=0.01)
losses = []
with Context(TRAINING=1):
  for _ in range(2):
    opt.zero_grad()
    loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
RESULT = {"losses": losses, "b2": l2.bias.tolist()}
print(RESULT)
