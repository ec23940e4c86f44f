# an iterative update realized every step (same kernel reused)
from tinygrad import Tensor
x = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
for _ in range(4):
  x = (x * 0.5 + 1).realize()
RESULT = x.tolist()
print(RESULT)
