//! `DeviceVector` against the host implementation of `VectorOps`, its
//! index kernels, transfer accounting and errors.
//!
//! Runs on the device chosen by `FEMQUAD_DEVICE` (PoCL in CI). Without an
//! OpenCL platform these tests fail and say what to install.

use std::sync::{Arc, OnceLock};

use femquad::Precision;
use femquad::backend::Vector;
use femquad::opencl::vector::{MAX_GROUPS, WG, vector_source};
use femquad::opencl::{Device, DeviceIndices, DeviceVector};
use femquad::rng::Rng;
use femquad::vector::{VectorOps, check_finite};
use femquad::{Error, Real};

/// The tests' device ([`femquad::opencl::testing::device`]), opened once for
/// this file.
fn device() -> Arc<Device> {
    static DEVICE: OnceLock<Arc<Device>> = OnceLock::new();
    DEVICE.get_or_init(femquad::opencl::testing::device).clone()
}

/// Lengths: empty, one, a partial 16-byte block, a few thousand, a
/// non-multiple of the vector widths (2, 4), of the work-group size and of
/// 4·WG; and one long enough for a work-item of a reduction to take several
/// blocks.
const LENGTHS: [usize; 6] = [
    0,
    1,
    7,
    3000,
    4 * WG * 5 + 4 * 3 + 3,
    4 * WG * MAX_GROUPS + 4099,
];

fn random<R: Real>(n: usize, seed: u64) -> Vec<R> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| R::from_f64(rng.range(-1.0, 1.0))).collect()
}

fn up<R: Real>(v: &[R]) -> DeviceVector<R> {
    DeviceVector::from_host(&device(), v).unwrap()
}

fn bits<R: Real>(v: &[R]) -> Vec<u64> {
    v.iter().map(|x| x.to_f64().to_bits()).collect()
}

fn assert_close(what: &str, device: f64, host: f64, rel: f64) {
    let scale = host.abs().max(f64::MIN_POSITIVE);
    assert!(
        (device - host).abs() <= rel * scale,
        "{what}: device {device:e}, host {host:e}"
    );
}

/// Every operation on device vectors equals the host's: elementwise ones
/// bitwise, reductions to `rel`; multi-operations equal loops of single
/// ones bitwise; reductions repeat bitwise.
fn matches_host<R: Real>(n: usize, rel: f64) {
    let (x, y, z) = (random::<R>(n, 1), random::<R>(n, 2), random::<R>(n, 3));
    let (dx, dy, dz) = (up(&x), up(&y), up(&z));
    let same = |what: &str, d: &DeviceVector<R>, h: &Vec<R>| {
        assert_eq!(
            bits(&d.to_host().unwrap()),
            bits(h),
            "{what}, n = {n}, {}",
            R::PRECISION
        );
    };
    // elementwise
    let (mut h, mut d) = (y.clone(), dy.zeros_like().unwrap());
    same("zeros_like", &d, &vec![R::ZERO; n]);
    d.copy_from(&dy).unwrap();
    same("copy_from", &d, &h);
    VectorOps::fill(&mut h, 0.3).unwrap();
    d.fill(0.3).unwrap();
    same("fill", &d, &h);
    d.copy_from(&dy).unwrap();
    h.copy_from(&y).unwrap();
    h.scale(-1.7).unwrap();
    d.scale(-1.7).unwrap();
    same("scale", &d, &h);
    h.axpy(0.37, &x).unwrap();
    d.axpy(0.37, &dx).unwrap();
    same("axpy", &d, &h);
    h.axpby(-0.61, &z, 1.3).unwrap();
    d.axpby(-0.61, &dz, 1.3).unwrap();
    same("axpby", &d, &h);
    h.pointwise_mult(&x, &z).unwrap();
    d.pointwise_mult(&dx, &dz).unwrap();
    same("pointwise_mult", &d, &h);
    // multi-axpy over 11 vectors (two launches) = host = loop of axpy
    let hs: Vec<Vec<R>> = (0..11).map(|j| random(n, 10 + j)).collect();
    let ds: Vec<DeviceVector<R>> = hs.iter().map(|v| up(v)).collect();
    let alphas: Vec<f64> = (0..11).map(|j| 0.1 * j as f64 - 0.45).collect();
    let (hr, dr): (Vec<&Vec<R>>, Vec<&DeviceVector<R>>) =
        (hs.iter().collect(), ds.iter().collect());
    h.copy_from(&y).unwrap();
    d.copy_from(&dy).unwrap();
    h.maxpy(&alphas, &hr).unwrap();
    d.maxpy(&alphas, &dr).unwrap();
    same("maxpy", &d, &h);
    let mut looped = dy.zeros_like().unwrap();
    looped.copy_from(&dy).unwrap();
    for (a, v) in alphas.iter().zip(&ds) {
        looped.axpy(*a, v).unwrap();
    }
    assert_eq!(
        bits(&looped.to_host().unwrap()),
        bits(&d.to_host().unwrap()),
        "maxpy vs axpy loop"
    );
    // reductions
    assert_close("dot", dx.dot(&dy).unwrap(), x.dot(&y).unwrap(), rel);
    assert_close("norm2", dx.norm2().unwrap(), x.norm2().unwrap(), rel);
    assert_eq!(dx.norm_inf().unwrap(), x.norm_inf().unwrap(), "norm_inf");
    let dd = dx.dots(&dr).unwrap();
    let hd = x.dots(&hr).unwrap();
    for (j, ((a, b), v)) in dd.iter().zip(&hd).zip(&ds).enumerate() {
        assert_close(&format!("dots[{j}]"), *a, *b, rel);
        assert_eq!(
            a.to_bits(),
            dx.dot(v).unwrap().to_bits(),
            "dots[{j}] vs dot"
        );
    }
    // bitwise reproducible
    let first = dx.dot(&dy).unwrap();
    for _ in 0..3 {
        assert_eq!(dx.dot(&dy).unwrap().to_bits(), first.to_bits());
    }
    // non-finite search and single entries
    assert_eq!(dx.first_non_finite().unwrap(), None);
    if n > 0 {
        let k = n - 1 - n / 3;
        let mut bad = x.clone();
        bad[k] = R::from_f64(f64::NAN);
        if k + 1 < n {
            bad[n - 1] = R::from_f64(f64::INFINITY);
        }
        let dbad = up(&bad);
        assert_eq!(dbad.first_non_finite().unwrap(), Some(k), "n = {n}");
        assert!(dbad.norm_inf().unwrap().is_nan());
        assert_eq!(
            dbad.get(k / 2).unwrap().to_f64().to_bits(),
            bad[k / 2].to_f64().to_bits()
        );
    }
}

/// The end of the error for vectors in two places.
const MIXED: &str = ": vectors combined in one operation must live in one place (femquad \
                     never transfers implicitly; use Vector::to_device or Vector::to_host)";

#[test]
fn f64_operations_match_the_host() {
    for n in LENGTHS {
        matches_host::<f64>(n, 1e-13);
    }
}

#[test]
fn f32_operations_match_the_host() {
    for n in LENGTHS {
        matches_host::<f32>(n, 1e-6);
    }
}

#[test]
fn index_operations_match_loops() {
    let n = 1000;
    let v = random::<f64>(n, 4);
    let src = random::<f64>(n, 5);
    let idx: Vec<u32> = (0..n as u32)
        .filter(|i| i % 7 == 3 || i % 11 == 0)
        .rev()
        .collect();
    let di = DeviceIndices::from_host(&device(), &idx).unwrap();
    assert!(di.distinct() && di.bound() == *idx.iter().max().unwrap() as usize + 1);
    let (dv, dsrc) = (up(&v), up(&src));
    // set_at
    let mut d = dv.zeros_like().unwrap();
    d.copy_from(&dv).unwrap();
    d.set_at(&di, 2.5).unwrap();
    let mut h = v.clone();
    for &i in &idx {
        h[i as usize] = 2.5;
    }
    assert_eq!(d.to_host().unwrap(), h);
    // copy_at
    d.copy_at(&di, &dsrc).unwrap();
    for &i in &idx {
        h[i as usize] = src[i as usize];
    }
    assert_eq!(d.to_host().unwrap(), h);
    // gather
    let mut g = DeviceVector::<f64>::zeros(&device(), idx.len()).unwrap();
    g.gather(&dsrc, &di).unwrap();
    let hg: Vec<f64> = idx.iter().map(|&i| src[i as usize]).collect();
    assert_eq!(g.to_host().unwrap(), hg);
    // scatter
    let mut s = dv.zeros_like().unwrap();
    s.scatter(&di, &g).unwrap();
    let mut hs = vec![0.0; n];
    for (k, &i) in idx.iter().enumerate() {
        hs[i as usize] = hg[k];
    }
    assert_eq!(s.to_host().unwrap(), hs);
    // scatter-add, from an offset of the source
    let from = 5;
    let mut a = dv.zeros_like().unwrap();
    a.copy_from(&dv).unwrap();
    a.scatter_add(&di, &dsrc, from).unwrap();
    let mut ha = v.clone();
    for (k, &i) in idx.iter().enumerate() {
        ha[i as usize] += src[from + k];
    }
    assert_eq!(a.to_host().unwrap(), ha);
    let e = a.scatter_add(&di, &g, 1).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "invalid argument `src`: entries 1..1+{0} pass the end of a vector of {0} entries",
            idx.len()
        )
    );
    // empty index sets do nothing
    let empty = DeviceIndices::from_host(&device(), &[]).unwrap();
    s.set_at(&empty, 1.0).unwrap();
    assert_eq!(s.to_host().unwrap(), hs);
    // errors
    let far = DeviceIndices::from_host(&device(), &[3, n as u32]).unwrap();
    let e = s.set_at(&far, 0.0).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "invalid argument `indices`: index {n} is out of range for the vector of {n} entries"
        )
    );
    let twice = DeviceIndices::from_host(&device(), &[3, 4, 3]).unwrap();
    let e = s
        .scatter(&twice, &up(&[1.0, 2.0, 3.0]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "invalid argument `indices`: a scatter needs distinct indices (some index repeats)"
    );
    let e = s
        .scatter_add(&twice, &up(&[1.0, 2.0, 3.0]), 0)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "invalid argument `indices`: a scatter-add needs distinct indices (some index repeats)"
    );
    let e = g.gather(&dsrc, &twice).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "invalid argument `indices`: expected {} entries, got 3",
            idx.len()
        )
    );
}

#[test]
fn transfers_are_counted_as_arrays_or_scalars() {
    // its own device: the counters of the shared one move with the other tests
    let device = femquad::opencl::testing::device();
    let n = 5000;
    let before = device.stats();
    let x = DeviceVector::from_host(&device, &random::<f64>(n, 6)).unwrap();
    let mut y = x.zeros_like().unwrap();
    let after_upload = device.stats();
    assert_eq!(
        after_upload.array_bytes_written() - before.array_bytes_written(),
        8 * n as u64
    );
    assert_eq!(
        after_upload.vector_bytes - before.vector_bytes,
        8 * n as u64
    );
    // device-side work: no array moves; each reduction is one scalar read
    y.axpby(2.0, &x, 0.5).unwrap();
    y.maxpy(&[1.0, 2.0], &[&x, &x]).unwrap();
    let _ = y.dot(&x).unwrap();
    let _ = y.dots(&[&x, &y, &x]).unwrap();
    let _ = y.norm_inf().unwrap();
    let _ = y.first_non_finite().unwrap();
    let s = device.stats();
    assert_eq!(s.array_bytes_written(), after_upload.array_bytes_written());
    assert_eq!(s.array_bytes_read, after_upload.array_bytes_read);
    assert_eq!(s.scalar_reads - after_upload.scalar_reads, 4);
    assert_eq!(
        s.scalar_bytes_read - after_upload.scalar_bytes_read,
        8 * (1 + 3 + 1 + 1)
    );
    assert_eq!(
        s.read_bytes - after_upload.read_bytes,
        s.scalar_bytes_read - after_upload.scalar_bytes_read
    );
    // a download is an array read
    let _ = y.to_host().unwrap();
    assert_eq!(
        device.stats().array_bytes_read - s.array_bytes_read,
        8 * n as u64
    );
}

#[test]
fn errors_name_the_argument() {
    let device = device();
    let mut y = up(&[1.0f64, 2.0, 3.0]);
    let short = up(&[1.0f64, 2.0]);
    let e = y.axpy(1.0, &short).unwrap_err().to_string();
    assert_eq!(e, "invalid argument `x`: expected 3 entries, got 2");
    let e = y.dot(&short).unwrap_err().to_string();
    assert_eq!(e, "invalid argument `y`: expected 3 entries, got 2");
    let e = y.dots(&[&y, &short]).unwrap_err().to_string();
    assert_eq!(e, "invalid argument `vs`: vs[1]: expected 3 entries, got 2");
    let e = y.maxpy(&[1.0], &[&short, &short]).unwrap_err().to_string();
    assert_eq!(e, "invalid argument `alphas`: expected 2 entries, got 1");
    let e = y.upload(&[1.0]).unwrap_err().to_string();
    assert_eq!(e, "invalid argument `values`: expected 3 entries, got 1");
    let e = y.get(3).unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid argument `index`: 3 is out of range for a vector of 3 entries"
    );
    // another context on the same device is another device for buffers
    let other = femquad::opencl::testing::device();
    let elsewhere = DeviceVector::from_host(&other, &[1.0f64, 2.0, 3.0]).unwrap();
    let e = y.copy_from(&elsewhere).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "invalid argument `x`: `x` is on device [{i}] `{name}` but the vector it is combined \
             with is on device [{i}] `{name}` (a different device or context; transfer \
             explicitly through the host)",
            i = device.info().index,
            name = device.info().name
        )
    );
    // host and device vectors do not mix
    let mut dv = Vector::Device(up(&[1.0f64, 2.0, 3.0]));
    let hv = Vector::from(vec![1.0f64, 2.0, 3.0]);
    let e = dv.axpy(1.0, &hv).unwrap_err().to_string();
    let name = &device.info().name;
    assert_eq!(
        e,
        format!(
            "invalid argument `x`: `x` is on the host but `y` on device [{}] `{name}`{MIXED}",
            device.info().index
        )
    );
    let e = hv.dot(&dv).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "invalid argument `y`: `y` is on device [{}] `{name}` but `x` on the host{MIXED}",
            device.info().index
        )
    );
    let e = hv.dots(&[&hv, &dv]).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "invalid argument `vs`: vs[1]: `vs` is on device [{}] `{name}` but `x` on the \
             host{MIXED}",
            device.info().index
        )
    );
    // non-finite entries are found on the device and reported by index
    let bad = Vector::Device(up(&[1.0f64, 2.0, f64::NEG_INFINITY, f64::NAN]));
    assert_eq!(bad.first_non_finite().unwrap(), Some(2));
    let e = check_finite("u", &bad).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NonFinite {
                name: "u",
                index: 2,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "argument `u` holds a non-finite value (-inf) at index 2"
    );
    // explicit transfers work
    let moved = hv.to_device(&device).unwrap();
    assert_eq!(moved.to_host().unwrap(), vec![1.0, 2.0, 3.0]);
    assert_eq!(
        dv.location().to_string(),
        format!("device [{}] `{name}`", device.info().index)
    );
    dv.copy_from(&moved).unwrap();
}

#[test]
fn every_variant_of_the_vector_source_compiles() {
    // f32 and f64 with double accumulators are built by the tests above; a
    // device without fp64 gets f32 with float accumulators: build it too.
    let device = device();
    device
        .program(&vector_source(Precision::F32, false))
        .unwrap();
    for p in Precision::ALL {
        device.program(&vector_source(p, true)).unwrap();
    }
}

#[test]
fn device_vectors_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<DeviceVector<f32>>();
    send_sync::<DeviceIndices>();
    send_sync::<Vector<f64>>();
    // two threads reducing vectors of one program at once
    let x = up(&random::<f64>(10_000, 7));
    let expected = x.norm2().unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| (0..20).map(|_| x.norm2().unwrap()).collect::<Vec<_>>()))
            .collect();
        for h in handles {
            for v in h.join().unwrap() {
                assert_eq!(v.to_bits(), expected.to_bits());
            }
        }
    });
}

/// Precision conversion (`Vector::convert_from`: `vec_convert` on the
/// device, `femquad::vector::convert` on the host): f64 → f32 rounds to
/// nearest, ties to even — checked on values that f32 cannot represent
/// against their neighbours written bit by bit (halfway cases both ways, just
/// above and below halfway, negative, overflow to ∞, subnormal, underflow to
/// 0, NaN) — and device and host give the same bits for every length of
/// `LENGTHS` (the partial blocks), f64 → f32, f32 → f64 (exact) and within
/// one precision (a copy).
#[test]
fn precision_conversion_rounds_to_nearest_and_device_equals_host() {
    let dev = device();
    let one = 1.0f64;
    let ulp32 = 2f64.powi(-23); // f32's spacing at 1
    let up = f32::from_bits(1.0f32.to_bits() + 1); // 1 + 2^-23
    let min_sub = f32::from_bits(1); // 2^-149
    let cases: [(f64, f32); 12] = [
        (one + 0.5 * ulp32, 1.0), // halfway: to even (1.0)
        (one + 1.5 * ulp32, f32::from_bits(1.0f32.to_bits() + 2)), // halfway: to even (…10)
        (one + 0.5 * ulp32 + 2f64.powi(-40), up), // just above halfway: up
        (one + 0.5 * ulp32 - 2f64.powi(-40), 1.0), // just below halfway: down
        (-(one + 0.75 * ulp32), -up), // negative, nearer the upper neighbour
        (0.1, f32::from_bits(0x3dcc_cccd)), // 0.1 rounds up in f32
        (1e39, f32::INFINITY),    // beyond f32::MAX
        (-1e39, f32::NEG_INFINITY),
        (1.2 * 2f64.powi(-149), min_sub), // subnormal: nearest is 2^-149
        (0.4 * 2f64.powi(-149), 0.0),     // below half the smallest subnormal
        (f64::from(f32::MAX), f32::MAX),  // representable: exact
        (3.0 * 2f64.powi(-140), f32::from_bits(3 << 9)), // a representable subnormal
    ];
    let x: Vec<f64> = cases.iter().map(|c| c.0).collect();
    let expected: Vec<u32> = cases.iter().map(|c| c.1.to_bits()).collect();
    let mut host = Vector::<f32>::host_zeros(x.len());
    host.convert_from(&Vector::from(x.clone())).unwrap();
    let host_bits: Vec<u32> = host
        .to_host()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(host_bits, expected, "host rounding of {x:?}");
    let mut on_dev = Vector::<f32>::device_zeros(&dev, x.len()).unwrap();
    on_dev
        .convert_from(&Vector::from(x.clone()).to_device(&dev).unwrap())
        .unwrap();
    let dev_bits: Vec<u32> = on_dev
        .to_host()
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    assert_eq!(dev_bits, expected, "device rounding of {x:?}");
    // NaN stays NaN
    let mut nan = Vector::<f32>::device_zeros(&dev, 1).unwrap();
    nan.convert_from(&Vector::from(vec![f64::NAN]).to_device(&dev).unwrap())
        .unwrap();
    assert!(nan.to_host().unwrap()[0].is_nan());

    fn both<S: Real, T: Real>(dev: &Arc<Device>, x: &[S]) -> (Vec<u64>, Vec<u64>) {
        let mut host = Vector::<T>::host_zeros(x.len());
        host.convert_from(&Vector::from(x.to_vec())).unwrap();
        let mut d = Vector::<T>::device_zeros(dev, x.len()).unwrap();
        d.convert_from(&Vector::from(x.to_vec()).to_device(dev).unwrap())
            .unwrap();
        let bits = |v: Vector<T>| -> Vec<u64> {
            v.to_host()
                .unwrap()
                .iter()
                .map(|v| v.to_f64().to_bits())
                .collect()
        };
        (bits(host), bits(d))
    }
    for n in LENGTHS {
        // values spread over many binades, most not representable in f32
        let x: Vec<f64> = random::<f64>(n, 11)
            .iter()
            .enumerate()
            .map(|(i, v)| v * 10f64.powi((i % 17) as i32 - 8))
            .collect();
        let (h, d) = both::<f64, f32>(&dev, &x);
        assert_eq!(h, d, "f64 → f32, n = {n}");
        let rounded: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let (h, d) = both::<f32, f64>(&dev, &rounded);
        assert_eq!(h, d, "f32 → f64, n = {n}");
        let back: Vec<u64> = rounded.iter().map(|&v| f64::from(v).to_bits()).collect();
        assert_eq!(h, back, "f32 → f64 is exact, n = {n}");
        let (h, d) = both::<f64, f64>(&dev, &x);
        assert_eq!(h, d, "f64 → f64, n = {n}");
        assert_eq!(h, x.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    }
    // a wrong length is named
    let mut y = Vector::<f32>::device_zeros(&dev, 3).unwrap();
    let e = y
        .convert_from(&Vector::<f64>::device_zeros(&dev, 4).unwrap())
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { name: "x", .. }), "{e}");
    let e = y.convert_from(&Vector::from(vec![0.0f64; 3])).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { name: "x", .. }), "{e}");
}
