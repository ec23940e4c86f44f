# int sum, int mean (float result), int max, bool any
from tinygrad import Tensor
x = Tensor([[1, 2, 3], [4, 5, 6]])
RESULT = {"sum": x.sum().item(), "mean": x.mean().item(), "max1": x.max(axis=1).tolist(), "mean0": x.mean(axis=0).tolist()}
print(RESULT)
