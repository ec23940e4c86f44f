# timeout: 300
# the 20,000-view chain of deep_movement_chain.py, short enough for the sanitizer builds: 400 reshape/permute
# views of one tensor (the bounds of the index math were once recomputed at every level: 2^400 steps);
# the expected output is worked out by hand (the chain's period divides 400)
from tinygrad import Tensor
x = Tensor.arange(6).reshape(2, 3).float()
for i in range(400): x = x.reshape(3, 2) if i % 2 == 0 else x.permute(1, 0)
print(x.tolist())
