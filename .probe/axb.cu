// Probe: A·X (k=8, f64, row-major) kernel shapes on a 7-point DIA stencil and a random CSR.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <random>
#define CK(x) do{cudaError_t e=(x); if(e!=cudaSuccess){printf("%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e)); exit(1);}}while(0)
typedef unsigned u32; typedef unsigned long long u64;
template<int K>
__global__ void dia_tiles(u32 m, u32 nd, const int* off, const double* val, const double* x, double* y){
  u32 r = blockIdx.x*blockDim.x+threadIdx.x; if(r>=m) return;
  double acc[K]; for(int t=0;t<K;++t) acc[t]=0;
  u64 slot=r;
  for(u32 i=0;i<nd;++i,slot+=m){ u32 c=r+(u32)__ldg(off+i); if(c<m){ double v=val[slot];
    #pragma unroll
    for(int t=0;t<K;++t) acc[t]+=v*__ldg(x+(u64)c*K+t);} }
  for(int t=0;t<K;++t) y[(u64)r*K+t]=acc[t];
}
template<int K>
__global__ void dia_tiles_v2(u32 m, u32 nd, const int* off, const double* val, const double* x, double* y){
  u32 r = blockIdx.x*blockDim.x+threadIdx.x; if(r>=m) return;
  double acc[K]; for(int t=0;t<K;++t) acc[t]=0;
  u64 slot=r;
  for(u32 i=0;i<nd;++i,slot+=m){ u32 c=r+(u32)__ldg(off+i); if(c<m){ double v=val[slot];
    const double2* xr=(const double2*)(x+(u64)c*K);
    #pragma unroll
    for(int t=0;t<K/2;++t){ double2 q=__ldg(xr+t); acc[2*t]+=v*q.x; acc[2*t+1]+=v*q.y;} } }
  double2* yr=(double2*)(y+(u64)r*K);
  for(int t=0;t<K/2;++t) yr[t]=make_double2(acc[2*t],acc[2*t+1]);
}
template<int K, int G>
__global__ void dia_lanes(u32 m, u32 nd, const int* off, const double* val, const double* x, double* y){
  u64 g=((u64)blockIdx.x*blockDim.x+threadIdx.x); u64 r=g/G; u32 j=g%G; if(r>=m) return;
  double acc=0; u64 slot=r;
  for(u32 i=0;i<nd;++i,slot+=m){ u32 c=(u32)r+(u32)__ldg(off+i); if(c<m){ double v=val[slot];
    if(j<K) acc+=v*__ldg(x+(u64)c*K+j);} }
  if(j<K) y[r*K+j]=acc;
}
template<int K>
__global__ void csr_tiles(u32 m, const u32* rp, const u32* col, const double* val, const double* x, double* y){
  u32 r = blockIdx.x*blockDim.x+threadIdx.x; if(r>=m) return;
  double acc[K]; for(int t=0;t<K;++t) acc[t]=0;
  for(u32 i=rp[r];i<rp[r+1];++i){ u32 c=col[i]; double v=val[i];
    #pragma unroll
    for(int t=0;t<K;++t) acc[t]+=v*__ldg(x+(u64)c*K+t);}
  for(int t=0;t<K;++t) y[(u64)r*K+t]=acc[t];
}
template<int K, int G>
__global__ void csr_lanes(u32 m, const u32* rp, const u32* col, const double* val, const double* x, double* y){
  u64 g=((u64)blockIdx.x*blockDim.x+threadIdx.x); u64 r=g/G; u32 j=g%G; if(r>=m) return;
  u32 sub=threadIdx.x%G; u32 mask = G==32?0xffffffffu:((1u<<G)-1)<<(threadIdx.x%32/G*G);
  u32 b=rp[r], e=rp[r+1]; double acc=0;
  for(u32 base=b; base<e; base+=G){ double v=0; u32 c=0; if(base+sub<e){v=val[base+sub]; c=col[base+sub];}
    u32 cnt=min((u32)G,e-base);
    for(u32 t=0;t<cnt;++t){ double vv=__shfl_sync(mask,v,t,G); u32 cc=__shfl_sync(mask,c,t,G); if(j<K) acc+=vv*__ldg(x+(u64)cc*K+j);} }
  if(j<K) y[r*K+j]=acc;
}

template<int K, int G>
__global__ void dia_lanes_v2(u32 m, u32 nd, const int* off, const double* val, const double* x, double* y){
  // G lanes per row, each lane K/G consecutive columns loaded as double2
  constexpr int P=K/G; u64 g=((u64)blockIdx.x*blockDim.x+threadIdx.x); u64 r=g/G; u32 j=g%G; if(r>=m) return;
  double acc[P]; for(int t=0;t<P;++t) acc[t]=0; u64 slot=r;
  for(u32 i=0;i<nd;++i,slot+=m){ u32 c=(u32)r+(u32)__ldg(off+i); if(c<m){ double v=val[slot];
    const double2* xr=(const double2*)(x+(u64)c*K+j*P);
    #pragma unroll
    for(int t=0;t<P/2;++t){ double2 q=__ldg(xr+t); acc[2*t]+=v*q.x; acc[2*t+1]+=v*q.y;} } }
  double2* yr=(double2*)(y+r*K+j*P);
  for(int t=0;t<P/2;++t) yr[t]=make_double2(acc[2*t],acc[2*t+1]);
}
template<int K, int L>
__global__ void csr_vec_tiles(u32 m, const u32* rp, const u32* col, const double* val, const double* x, double* y, bool v2){
  u64 g=((u64)blockIdx.x*blockDim.x+threadIdx.x); u64 r=g/L; u32 l=g%L; bool act=r<m;
  double acc[K]; for(int t=0;t<K;++t) acc[t]=0;
  if(act) for(u32 i=rp[r]+l;i<rp[r+1];i+=L){ u32 c=col[i]; double v=val[i];
    if(v2){ const double2* xr=(const double2*)(x+(u64)c*K);
    #pragma unroll
      for(int t=0;t<K/2;++t){ double2 q=__ldg(xr+t); acc[2*t]+=v*q.x; acc[2*t+1]+=v*q.y;} }
    else {
    #pragma unroll
    for(int t=0;t<K;++t) acc[t]+=v*__ldg(x+(u64)c*K+t);} }
  #pragma unroll
  for(int t=0;t<K;++t) for(int o=L/2;o>0;o/=2) acc[t]+=__shfl_down_sync(0xffffffffu,acc[t],o,L);
  if(act&&l==0) for(int t=0;t<K;++t) y[r*K+t]=acc[t];
}
template<int K, int G>
__global__ void csr_lanes_v2(u32 m, const u32* rp, const u32* col, const double* val, const double* x, double* y){
  constexpr int P=K/G; u64 g=((u64)blockIdx.x*blockDim.x+threadIdx.x); u64 r=g/G; u32 j=g%G; if(r>=m) return;
  u32 sub=threadIdx.x%G; u32 mask = G==32?0xffffffffu:((1u<<G)-1)<<(threadIdx.x%32/G*G);
  u32 b=rp[r], e=rp[r+1]; double acc[P]; for(int t=0;t<P;++t) acc[t]=0;
  for(u32 base=b; base<e; base+=G){ double v=0; u32 c=0; if(base+sub<e){v=val[base+sub]; c=col[base+sub];}
    u32 cnt=min((u32)G,e-base);
    for(u32 t=0;t<cnt;++t){ double vv=__shfl_sync(mask,v,t,G); u32 cc=__shfl_sync(mask,c,t,G);
      const double2* xr=(const double2*)(x+(u64)cc*K+j*P);
      #pragma unroll
      for(int q=0;q<P/2;++q){ double2 w=__ldg(xr+q); acc[2*q]+=vv*w.x; acc[2*q+1]+=vv*w.y;} } }
  double2* yr=(double2*)(y+r*K+j*P);
  for(int t=0;t<P/2;++t) yr[t]=make_double2(acc[2*t],acc[2*t+1]);
}

template<int K, int G, int U>
__global__ void dia_lanes_code(u32 m, u32 nd, const int* off, const unsigned char* codes, const double* table, const double* x, double* y){
  constexpr int P=K/G; u64 g=((u64)blockIdx.x*blockDim.x+threadIdx.x); u64 r=g/G; u32 j=g%G; if(r>=m) return;
  double acc[P]; for(int t=0;t<P;++t) acc[t]=0; u64 slot=r;
  #pragma unroll U
  for(u32 i=0;i<nd;++i,slot+=m){ u32 c=(u32)r+(u32)__ldg(off+i); if(c<m){ double v=table? __ldg(table+__ldcs(codes+slot)) : 0.0;
    const double2* xr=(const double2*)(x+(u64)c*K+j*P);
    #pragma unroll
    for(int t=0;t<P/2;++t){ double2 q=__ldg(xr+t); acc[2*t]+=v*q.x; acc[2*t+1]+=v*q.y;} } }
  double2* yr=(double2*)(y+r*K+j*P);
  for(int t=0;t<P/2;++t) yr[t]=make_double2(acc[2*t],acc[2*t+1]);
}
template<int K, int G, int U>
__global__ void dia_lanes_u(u32 m, u32 nd, const int* off, const double* val, const double* x, double* y){
  constexpr int P=K/G; u64 g=((u64)blockIdx.x*blockDim.x+threadIdx.x); u64 r=g/G; u32 j=g%G; if(r>=m) return;
  double acc[P]; for(int t=0;t<P;++t) acc[t]=0; u64 slot=r;
  #pragma unroll U
  for(u32 i=0;i<nd;++i,slot+=m){ u32 c=(u32)r+(u32)__ldg(off+i); if(c<m){ double v=val[slot];
    const double2* xr=(const double2*)(x+(u64)c*K+j*P);
    #pragma unroll
    for(int t=0;t<P/2;++t){ double2 q=__ldg(xr+t); acc[2*t]+=v*q.x; acc[2*t+1]+=v*q.y;} } }
  double2* yr=(double2*)(y+r*K+j*P);
  for(int t=0;t<P/2;++t) yr[t]=make_double2(acc[2*t],acc[2*t+1]);
}
// copy bandwidth
__global__ void copyk(u64 n, const double2* a, double2* b){ for(u64 i=blockIdx.x*(u64)blockDim.x+threadIdx.x;i<n;i+=(u64)gridDim.x*blockDim.x) b[i]=a[i]; }
template<typename F> float timeit(F f, int reps=30){ cudaEvent_t a,b; cudaEventCreate(&a); cudaEventCreate(&b); for(int i=0;i<5;++i) f(); CK(cudaDeviceSynchronize()); cudaEventRecord(a); for(int i=0;i<reps;++i) f(); cudaEventRecord(b); CK(cudaEventSynchronize(b)); float ms; cudaEventElapsedTime(&ms,a,b); return ms/reps; }
int main(int argc, char** argv){
  const int K=8; int n=argc>1?atoi(argv[1]):128; u32 m=(u32)n*n*n; int nd=7;
  int hoff[7]={-n*n,-n,-1,0,1,n,n*n};
  int* off; double *val,*x,*y; CK(cudaMalloc(&off,28)); CK(cudaMemcpy(off,hoff,28,cudaMemcpyHostToDevice));
  CK(cudaMalloc(&val,(u64)m*nd*8)); CK(cudaMalloc(&x,(u64)m*32*8)); CK(cudaMalloc(&y,(u64)m*32*8));
  CK(cudaMemset(val,0,(u64)m*nd*8)); CK(cudaMemset(x,0,(u64)m*32*8));
  u64 nb=(u64)m*K*8/16; float cp=timeit([&]{copyk<<<132*16,256>>>(nb,(double2*)x,(double2*)y);});
  double bw=2.0*m*K*8/cp/1e6; printf("copy %.0f GB/s\n",bw);
  double bytes=(double)m*nd*8+2.0*m*K*8; printf("dia bound %.3f ms\n",bytes/bw/1e6);
  printf("dia tiles    %.3f ms\n",timeit([&]{dia_tiles<K><<<(m+255)/256,256>>>(m,nd,off,val,x,y);}));
  printf("dia tiles v2 %.3f ms\n",timeit([&]{dia_tiles_v2<K><<<(m+255)/256,256>>>(m,nd,off,val,x,y);}));
  printf("dia lanes8   %.3f ms\n",timeit([&]{dia_lanes<K,8><<<((u64)m*8+255)/256,256>>>(m,nd,off,val,x,y);}));
  printf("dia lanes4v2 %.3f ms\n",timeit([&]{dia_lanes_v2<K,4><<<((u64)m*4+255)/256,256>>>(m,nd,off,val,x,y);}));
  printf("dia lanes2v2 %.3f ms\n",timeit([&]{dia_lanes_v2<K,2><<<((u64)m*2+255)/256,256>>>(m,nd,off,val,x,y);}));
  printf("dia lanes4v2 k=4 %.3f ms; tiles k=4 %.3f; v2 k=4 %.3f; lanes2v2 k=4 %.3f\n",timeit([&]{dia_lanes_v2<4,2><<<((u64)m*2+255)/256,256>>>(m,nd,off,val,x,y);}),timeit([&]{dia_tiles<4><<<(m+255)/256,256>>>(m,nd,off,val,x,y);}),timeit([&]{dia_tiles_v2<4><<<(m+255)/256,256>>>(m,nd,off,val,x,y);}),timeit([&]{dia_lanes_v2<4,2><<<((u64)m*2+255)/256,256>>>(m,nd,off,val,x,y);}));
  printf("dia lanes1v2 k=4 %.3f\n",timeit([&]{dia_lanes_v2<4,1><<<((u64)m+255)/256,256>>>(m,nd,off,val,x,y);}));
  printf("DIA k=16: lanes16 %.3f lanes4v2(P4) %.3f lanes8v2(P2) %.3f bound %.3f\n",
    timeit([&]{dia_lanes<16,16><<<((u64)m*16+255)/256,256>>>(m,nd,off,val,x,y);}),
    timeit([&]{dia_lanes_v2<16,4><<<((u64)m*4+255)/256,256>>>(m,nd,off,val,x,y);}),
    timeit([&]{dia_lanes_v2<16,8><<<((u64)m*8+255)/256,256>>>(m,nd,off,val,x,y);}), ((double)m*nd*8+2.0*m*16*8)/bw/1e6);
  printf("DIA k=32: lanes32 %.3f lanes8v2(P4) %.3f lanes16v2(P2) %.3f bound %.3f\n",
    timeit([&]{dia_lanes<32,32><<<((u64)m*32+255)/256,256>>>(m,nd,off,val,x,y);}),
    timeit([&]{dia_lanes_v2<32,8><<<((u64)m*8+255)/256,256>>>(m,nd,off,val,x,y);}),
    timeit([&]{dia_lanes_v2<32,16><<<((u64)m*16+255)/256,256>>>(m,nd,off,val,x,y);}), ((double)m*nd*8+2.0*m*32*8)/bw/1e6);
  { unsigned char* codes; double* table; CK(cudaMalloc(&codes,(u64)m*nd)); CK(cudaMemset(codes,0,(u64)m*nd)); CK(cudaMalloc(&table,64)); CK(cudaMemset(table,0,64));
    double cb=(double)m*nd+2.0*m*K*8; printf("coded bound %.3f\n", cb/bw/1e6);
    printf("coded k=8 G2 u1 %.3f u4 %.3f u8 %.3f ; G1(P8?) n/a\n",
      timeit([&]{dia_lanes_code<K,2,1><<<((u64)m*2+255)/256,256>>>(m,nd,off,codes,table,x,y);}),
      timeit([&]{dia_lanes_code<K,2,4><<<((u64)m*2+255)/256,256>>>(m,nd,off,codes,table,x,y);}),
      timeit([&]{dia_lanes_code<K,2,8><<<((u64)m*2+255)/256,256>>>(m,nd,off,codes,table,x,y);}));
    printf("full k=8 G2 u1 %.3f u4 %.3f u8 %.3f\n",
      timeit([&]{dia_lanes_u<K,2,1><<<((u64)m*2+255)/256,256>>>(m,nd,off,val,x,y);}),
      timeit([&]{dia_lanes_u<K,2,4><<<((u64)m*2+255)/256,256>>>(m,nd,off,val,x,y);}),
      timeit([&]{dia_lanes_u<K,2,8><<<((u64)m*2+255)/256,256>>>(m,nd,off,val,x,y);}));
    printf("coded k=32 G8 u1 %.3f u4 %.3f bound %.3f\n",
      timeit([&]{dia_lanes_code<32,8,1><<<((u64)m*8+255)/256,256>>>(m,nd,off,codes,table,x,y);}),
      timeit([&]{dia_lanes_code<32,8,4><<<((u64)m*8+255)/256,256>>>(m,nd,off,codes,table,x,y);}), ((double)m*nd+2.0*m*32*8)/bw/1e6);
  }
  // single product k=1 tiles for reference
  printf("dia k=1      %.3f ms (x8 = %.3f)\n",timeit([&]{dia_tiles<1><<<(m+255)/256,256>>>(m,nd,off,val,x,y);}), 8*timeit([&]{dia_tiles<1><<<(m+255)/256,256>>>(m,nd,off,val,x,y);}));
  // random CSR 2M x 2M, 16 per row
  u32 rm=2000000, per=16; std::vector<u32> rp(rm+1), col((u64)rm*per); std::mt19937 g(1);
  for(u32 r=0;r<=rm;++r) rp[r]=r*per; for(auto& c: col) c=g()%rm;
  u32 *drp,*dcol; double* dval; CK(cudaMalloc(&drp,(rm+1)*4)); CK(cudaMalloc(&dcol,col.size()*4)); CK(cudaMalloc(&dval,col.size()*8));
  CK(cudaMemcpy(drp,rp.data(),(rm+1)*4,cudaMemcpyHostToDevice)); CK(cudaMemcpy(dcol,col.data(),col.size()*4,cudaMemcpyHostToDevice)); CK(cudaMemset(dval,0,col.size()*8));
  double cb=(double)col.size()*12+rm*4+2.0*rm*K*8; printf("csr random byte bound %.3f ms; with gather of 64B/entry %.3f ms\n",cb/bw/1e6,(cb+col.size()*64.0)/bw/1e6);
  printf("csr tiles    %.3f ms\n",timeit([&]{csr_tiles<K><<<(rm+255)/256,256>>>(rm,drp,dcol,dval,x,y);}));
  printf("csr lanes8   %.3f ms\n",timeit([&]{csr_lanes<K,8><<<((u64)rm*8+255)/256,256>>>(rm,drp,dcol,dval,x,y);}));
  printf("csr vec16 tiles %.3f ms, v2 %.3f ms\n",timeit([&]{csr_vec_tiles<K,16><<<((u64)rm*16+255)/256,256>>>(rm,drp,dcol,dval,x,y,false);}),timeit([&]{csr_vec_tiles<K,16><<<((u64)rm*16+255)/256,256>>>(rm,drp,dcol,dval,x,y,true);}));
  printf("csr vec4 tiles %.3f ms, v2 %.3f ms\n",timeit([&]{csr_vec_tiles<K,4><<<((u64)rm*4+255)/256,256>>>(rm,drp,dcol,dval,x,y,false);}),timeit([&]{csr_vec_tiles<K,4><<<((u64)rm*4+255)/256,256>>>(rm,drp,dcol,dval,x,y,true);}));
  printf("csr lanes4v2 %.3f ms lanes2v2 %.3f ms\n",timeit([&]{csr_lanes_v2<K,4><<<((u64)rm*4+255)/256,256>>>(rm,drp,dcol,dval,x,y);}),timeit([&]{csr_lanes_v2<K,2><<<((u64)rm*2+255)/256,256>>>(rm,drp,dcol,dval,x,y);}));
  printf("csr k=4: lanes4 %.3f lanes2v2 %.3f vec16 tiles %.3f\n",timeit([&]{csr_lanes<4,4><<<((u64)rm*4+255)/256,256>>>(rm,drp,dcol,dval,x,y);}),timeit([&]{csr_lanes_v2<4,2><<<((u64)rm*2+255)/256,256>>>(rm,drp,dcol,dval,x,y);}),timeit([&]{csr_vec_tiles<4,16><<<((u64)rm*16+255)/256,256>>>(rm,drp,dcol,dval,x,y,false);}));
  printf("csr vec16 k=1 %.3f\n",timeit([&]{csr_vec_tiles<1,16><<<((u64)rm*16+255)/256,256>>>(rm,drp,dcol,dval,x,y,false);}));
  printf("CSR k=16: lanes16 %.3f lanes8v2(P2) %.3f lanes4v2(P4) %.3f\n",
    timeit([&]{csr_lanes<16,16><<<((u64)rm*16+255)/256,256>>>(rm,drp,dcol,dval,x,y);}),
    timeit([&]{csr_lanes_v2<16,8><<<((u64)rm*8+255)/256,256>>>(rm,drp,dcol,dval,x,y);}),
    timeit([&]{csr_lanes_v2<16,4><<<((u64)rm*4+255)/256,256>>>(rm,drp,dcol,dval,x,y);}));
  printf("CSR k=32: lanes32 %.3f lanes16v2(P2) %.3f lanes8v2(P4) %.3f\n",
    timeit([&]{csr_lanes<32,32><<<((u64)rm*32+255)/256,256>>>(rm,drp,dcol,dval,x,y);}),
    timeit([&]{csr_lanes_v2<32,16><<<((u64)rm*16+255)/256,256>>>(rm,drp,dcol,dval,x,y);}),
    timeit([&]{csr_lanes_v2<32,8><<<((u64)rm*8+255)/256,256>>>(rm,drp,dcol,dval,x,y);}));
  printf("csr k=1      %.3f ms\n",timeit([&]{csr_tiles<1><<<(rm+255)/256,256>>>(rm,drp,dcol,dval,x,y);}));
  return 0;
}
