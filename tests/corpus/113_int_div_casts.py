# int / int is float, bool sums, int item
from tinygrad import Tensor, dtypes
a = Tensor([1, 2, 3, 4])
b = Tensor([2, 2, 2, 2])
m = a > 2
RESULT = {"div": (a / b).tolist(), "msum": m.sum().item(), "mint": m.int().tolist(), "item": a.sum().item(), "f": a.float().mean().item(), "dt": str((a / b).dtype)}
print(RESULT)
