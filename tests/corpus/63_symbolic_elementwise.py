# a bound Variable in a shrink feeding an elementwise op and a mean
from tinygrad import Tensor, Variable
t = Tensor([float(i) for i in range(12)]).realize()
out = []
for n in (4, 7):
  v = Variable("n", 1, 12).bind(n)
  out.append((t.shrink(((0, v),)) + 1).sum().item())
RESULT = out
print(RESULT)
