# call B: kernel compile check, GPU tests, sanitizer, a short A·X bench of auto
cd "$(dirname "$0")/.."
bash .probe/cu/check.sh 2>&1 | tail -12
export TEST_TIMEOUT=300
TESTS="suite:operator:: spmv-lib suite:gpu:: suite:gpu_deterministic:: suite:gpu_diagonal:: suite:values:: quickstart-example kernels" lab/run tests sanitize > /tmp/b-tests.log 2>&1
tail -30 /tmp/b-tests.log
B=/tmp/spmv-bundle/bin
timeout 120 $B/spmv bench poisson3d:n=128 "banded:n=4000000,offsets=-1000;-1;0;1;1000,broken=0.1,scatter=0.001" --formats auto,hdc --precision f64 --rhs 1,4,8,16,32 --reps 20 2>&1 | grep -vE "^#   (dia|csr|sell|cusparse)" | tail -30
