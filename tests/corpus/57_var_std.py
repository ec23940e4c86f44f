# var and std over an axis
from tinygrad import Tensor
x = Tensor([[1.0, 2.0, 4.0, 8.0], [3.0, 3.0, 3.0, 3.0]]).realize()
RESULT = {"var": x.var(axis=1).tolist(), "std": x.std(axis=1).tolist()}
print(RESULT)
