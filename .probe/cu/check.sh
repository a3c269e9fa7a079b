cd $(dirname $0)
for f in csr dia sell; do nvcc -std=c++17 -arch=sm_90 -c $f.cu -o /tmp/$f.o 2>&1 | grep -v "Wno-deprecated" | grep -E "error|warning" | head -5; echo "$f rc=${PIPESTATUS[0]}"; done
cuobjdump -symbols /tmp/dia.o 2>/dev/null | grep -c "lanes_w"
