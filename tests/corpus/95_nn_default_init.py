# nn.Linear / nn.Conv2d with their default (seeded) initializers, then a forward pass
from tinygrad import Tensor, nn
Tensor.manual_seed(0)
lin = nn.Linear(3, 2)
conv = nn.Conv2d(1, 2, 2)
x = Tensor([[1.0, -1.0, 0.5]])
img = Tensor([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]])
RESULT = {"w": lin.weight.tolist(), "y": lin(x).tolist(), "c": conv(img).tolist()}
print(RESULT)
