# randn (Box-Muller over two rand halves) and normal(mean, std)
from tinygrad import Tensor
Tensor.manual_seed(1)
RESULT = {"randn": Tensor.randn(2, 3).tolist(), "normal": Tensor.normal(4, mean=2.0, std=0.5).tolist()}
print(RESULT)
