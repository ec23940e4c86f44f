# a bound Variable as an output dimension: the launch dims are symbolic
from tinygrad import Tensor, Variable
t = Tensor([[float(i * 4 + j) for j in range(4)] for i in range(16)]).realize()
out = []
for n in (5, 11):
  v = Variable("n", 1, 16).bind(n)
  out.append((t.shrink(((0, v), None)) * 2).sum(1).sum().item())
RESULT = out
print(RESULT)
out2 = []
for n in (6, 13):
  v = Variable("m", 1, 16).bind(n)
  out2.append((t.shrink(((0, v), None)) + 1).max().item())
RESULT = [out, out2]
print(RESULT)
