# call A: operator GPU tests and a quick A·X comparison, old vs new binary
cd "$(dirname "$0")/.."
TESTS="suite:operator::" TEST_TIMEOUT=300 lab/run tests 2>&1 | tail -25
B=/tmp/spmv-bundle/bin
for bin in spmv-old spmv; do
  echo "== $bin"
  timeout 150 $B/$bin bench poisson3d:n=128 random:rows=2000000,cols=2000000,mean=16 --formats dia:values=auto,sell-c-sigma,csr-vector,cusparse-alg1 --precision f64 --rhs 1,4,8,16,32 --reps 20 2>&1 | grep -E "k=|A·x|^#|format" | head -60
done
