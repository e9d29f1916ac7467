/* view.js — the browser viewer of `srdc view`: plays a run's frames in 3D with three.js.
 * The run comes as JSON in the page (viewer/view.c writes it): the mesh of the first frame,
 * then per frame the points as base64 Float32 and each varying field as base64 Uint16 scaled
 * to the field's range over the run. Rods are instanced cylinders (one per edge, with a sphere
 * at each node so bends stay closed), shells a two-sided mesh, springs lines, point bodies
 * spheres, the flat ground a grid. The URL's fragment chooses a frame and a field
 * (#frame=last&field=velocity), which is how the tests scrub; the status line says what was
 * drawn ("frame 20 of 20 drawn") and carries the drawn points' box on the screen. */
import * as THREE from 'three';
import { OrbitControls } from 'three/orbit';

const run = JSON.parse(document.getElementById('srd-run').textContent);
const $ = (id) => document.getElementById(id);
const BACKGROUND = 0xf7f7f5;
const PALETTE = [[0.85, 0.42, 0.20], [0.20, 0.50, 0.78], [0.35, 0.68, 0.35],
                 [0.78, 0.32, 0.55], [0.90, 0.72, 0.20], [0.45, 0.40, 0.75]];
/* the same perceptually ordered map as srdc render's pictures, dark blue to yellow */
const RAMP = [[0.27, 0.00, 0.33], [0.23, 0.32, 0.55], [0.13, 0.57, 0.55], [0.37, 0.79, 0.38], [0.99, 0.91, 0.15]];

function bytesOf(b64) {
  const s = atob(b64), bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes.buffer;
}

/* Decoded arrays, the most recent few: playing back decodes each frame once, and a large run's
   frames need not all sit decoded in memory. */
const decoded = new Map();
function cached(key, make) {
  if (!decoded.has(key)) {
    if (decoded.size >= 48) decoded.delete(decoded.keys().next().value);
    decoded.set(key, make());
  }
  return decoded.get(key);
}

/* A field's values in [0, 1] of its range, for frame k (static fields are stored once). */
function fieldValues(f, k) {
  return cached(f.index + ':' + (f.values ? -1 : k),
    () => Float32Array.from(new Uint16Array(bytesOf(f.values || run.frames[k].v[f.index])), (q) => q / 65535));
}
function pointsOf(k) {
  return cached('x:' + k, () => new Float32Array(bytesOf(run.frames[k].x)));
}

/* The palettes are sRGB, as on the screen; three.js lights and blends in linear light. */
function linear(rgb) { return tmp.c.setRGB(rgb[0], rgb[1], rgb[2], THREE.SRGBColorSpace); }

function rampColour(u, out) {
  const s = Math.min(1, Math.max(0, Number.isFinite(u) ? u : 0)) * 4, k = Math.min(3, Math.floor(s)), w = s - k;
  for (let c = 0; c < 3; c++) out[c] = (1 - w) * RAMP[k][c] + w * RAMP[k + 1][c];
  return out;
}
function objectColour(id, out) {
  const p = id < 0 ? [0.45, 0.45, 0.5] : PALETTE[id % PALETTE.length];
  out[0] = p[0]; out[1] = p[1]; out[2] = p[2];
  return out;
}

/* ---- the scene ---- */

const view = $('view');
let renderer;
try {
  renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
} catch (e) {
  $('status').textContent = 'this browser cannot draw WebGL: ' + e.message;
  throw e;
}
renderer.setPixelRatio(window.devicePixelRatio || 1);
renderer.setSize(view.clientWidth, view.clientHeight);
view.appendChild(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(BACKGROUND);
const cam = run.camera;
const camera = new THREE.PerspectiveCamera(cam.fov, view.clientWidth / view.clientHeight, cam.radius / 100,
                                           cam.radius * 100);
camera.up.fromArray(cam.up);
scene.add(new THREE.HemisphereLight(0xffffff, 0x505058, 1.4));
const light = new THREE.DirectionalLight(0xffffff, 2.2);
light.position.set(-0.45, 0.6, 0.65); /* above the camera's left shoulder, moving with it */
camera.add(light);
scene.add(camera);

const mesh = run.mesh;
const tmp = { v: new THREE.Vector3(), w: new THREE.Vector3(), q: new THREE.Quaternion(), m: new THREE.Matrix4(),
              s: new THREE.Vector3(), y: new THREE.Vector3(0, 1, 0), c: new THREE.Color(), rgb: [0, 0, 0] };

function instanced(geometry, count) {
  const material = new THREE.MeshLambertMaterial({ color: 0xffffff });
  const m = new THREE.InstancedMesh(geometry, material, Math.max(count, 1));
  m.count = count;
  m.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
  m.setColorAt(0, new THREE.Color(1, 1, 1));
  m.frustumCulled = false; /* the bounds move with the frames */
  scene.add(m);
  return m;
}

/* Rod nodes get a sphere of the largest radius among their edges: round joints, as the tubes of
   srdc render's round caps. A joint takes the colour of one of its edges (or of its node). */
function jointsOf(tubes, radius) {
  const r = new Map(), edge = new Map();
  for (let i = 0; i < radius.length; i++)
    for (const n of [tubes[2 * i], tubes[2 * i + 1]]) {
      r.set(n, Math.max(r.get(n) || 0, radius[i]));
      if (!edge.has(n)) edge.set(n, i);
    }
  return { nodes: [...r.keys()], radius: [...r.values()], edge: [...edge.values()] };
}

const tubes = instanced(new THREE.CylinderGeometry(1, 1, 1, 16, 1, true), mesh.tube_cells.length);
const joints = jointsOf(mesh.tubes, mesh.tube_radius);
const jointMesh = instanced(new THREE.SphereGeometry(1, 16, 12), joints.nodes.length);
/* (no spread of the radii into Math.max: a large model's would overflow the call's arguments) */
const maxTubeRadius = mesh.tube_radius.reduce((a, r) => Math.max(a, r), 0);
const dotRadius = Math.max(2 * maxTubeRadius, 0.015 * cam.radius);
const dots = instanced(new THREE.SphereGeometry(1, 20, 14), mesh.dot_cells.length);

function buffered(count, make) {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * count), 3));
  g.setAttribute('color', new THREE.BufferAttribute(new Float32Array(3 * count), 3));
  const object = make(g);
  object.frustumCulled = false;
  scene.add(object);
  return object;
}
const shells = buffered(mesh.tris.length, (g) => new THREE.Mesh(g, new THREE.MeshLambertMaterial(
  { vertexColors: true, side: THREE.DoubleSide })));
const lines = buffered(mesh.lines.length, (g) => new THREE.LineSegments(g, new THREE.LineBasicMaterial(
  { vertexColors: true })));

/* The ground: a grid on its plane under the run's centre, 10^k metres a square as in srdc render. */
function addGround() {
  if (!run.ground) return;
  const n = new THREE.Vector3().fromArray(run.ground, 0).normalize(), p = new THREE.Vector3().fromArray(run.ground, 3);
  const centre = new THREE.Vector3().fromArray(cam.centre), span = cam.span;
  const step = Math.pow(10, Math.floor(Math.log10(span / 2))), lines = 2 * Math.ceil(1.5 * span / step);
  const grid = new THREE.GridHelper(lines * step, lines, 0x8a8a90, 0xa0a0a8);
  grid.material.transparent = true;
  grid.material.opacity = 0.55;
  grid.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), n);
  grid.position.copy(centre).addScaledVector(n, -centre.clone().sub(p).dot(n));
  scene.add(grid);
}
addGround();

/* ---- one frame ---- */

function node(x, i, out) { return out.set(x[3 * i], x[3 * i + 1], x[3 * i + 2]); }

function placeTubes(x) {
  for (let i = 0; i < mesh.tube_cells.length; i++) {
    node(x, mesh.tubes[2 * i], tmp.v);
    node(x, mesh.tubes[2 * i + 1], tmp.w).sub(tmp.v);
    const len = tmp.w.length(), r = mesh.tube_radius[i];
    tmp.q.setFromUnitVectors(tmp.y, len > 0 ? tmp.w.clone().divideScalar(len) : tmp.y);
    tmp.v.addScaledVector(tmp.w, 0.5);
    tubes.setMatrixAt(i, tmp.m.compose(tmp.v, tmp.q, tmp.s.set(r, len, r)));
  }
  tubes.instanceMatrix.needsUpdate = true;
  spheresAt(jointMesh, x, joints.nodes, (i) => joints.radius[i]);
  spheresAt(dots, x, mesh.dots, () => dotRadius);
}

function spheresAt(target, x, nodes, radius) {
  tmp.q.identity();
  for (let i = 0; i < nodes.length; i++) {
    const r = radius(i);
    target.setMatrixAt(i, tmp.m.compose(node(x, nodes[i], tmp.v), tmp.q, tmp.s.set(r, r, r)));
  }
  target.instanceMatrix.needsUpdate = true;
}

function placeCorners(object, x, corners) {
  const pos = object.geometry.attributes.position.array;
  for (let j = 0; j < corners.length; j++)
    for (let c = 0; c < 3; c++) pos[3 * j + c] = x[3 * corners[j] + c];
  object.geometry.attributes.position.needsUpdate = true;
}

/* The colour of a cell (cells: the cell indices; corners: its nodes, k per cell) by object or
   by the chosen field (a point field averaged over the cell's nodes, as srdc render does). */
function cellColour(field, k, cell, corners, j, per) {
  if (!field) return objectColour(mesh.cell_object[cell], tmp.rgb);
  const values = fieldValues(field, k);
  if (field.cells) return rampColour(values[cell], tmp.rgb);
  let u = 0;
  for (let a = 0; a < per; a++) u += values[corners[j * per + a]] / per;
  return rampColour(u, tmp.rgb);
}

function colourInstances(target, cells, corners, per, field, k) {
  for (let j = 0; j < cells.length; j++)
    target.setColorAt(j, linear(cellColour(field, k, cells[j], corners, j, per)));
  if (target.instanceColor) target.instanceColor.needsUpdate = true;
}

/* Shell triangles and lines: point fields colour each corner, cell fields the whole cell. */
function colourCorners(object, cells, corners, per, field, k) {
  const col = object.geometry.attributes.color.array;
  const values = field ? fieldValues(field, k) : null;
  for (let j = 0; j < corners.length; j++) {
    const cell = cells[Math.floor(j / per)];
    const rgb = !field ? objectColour(mesh.cell_object[cell], tmp.rgb)
      : rampColour(field.cells ? values[cell] : values[corners[j]], tmp.rgb);
    linear(rgb).toArray(col, 3 * j);
  }
  object.geometry.attributes.color.needsUpdate = true;
}

function colourJoints(field, k) {
  const values = field && !field.cells ? fieldValues(field, k) : null;
  for (let i = 0; i < joints.nodes.length; i++) {
    const e = joints.edge[i];
    const rgb = values ? rampColour(values[joints.nodes[i]], tmp.rgb)
      : cellColour(field, k, mesh.tube_cells[e], mesh.tubes, e, 2);
    jointMesh.setColorAt(i, linear(rgb));
  }
  if (jointMesh.instanceColor) jointMesh.instanceColor.needsUpdate = true;
}

function colourAll(field, k) {
  colourInstances(tubes, mesh.tube_cells, mesh.tubes, 2, field, k);
  colourInstances(dots, mesh.dot_cells, mesh.dots, 1, field, k);
  colourJoints(field, k);
  colourCorners(shells, mesh.tri_cells, mesh.tris, 3, field, k);
  colourCorners(lines, mesh.line_cells, mesh.lines, 2, field, k);
}

/* The drawn points' box on the screen in CSS pixels, and the largest radius drawn there: the
   tests compare it with the screenshot. */
function screenBox(x) {
  const w = view.clientWidth, h = view.clientHeight, box = [Infinity, Infinity, -Infinity, -Infinity];
  let nearest = Infinity;
  camera.updateMatrixWorld();
  for (let i = 0; i < x.length / 3; i++) {
    node(x, i, tmp.v);
    nearest = Math.min(nearest, tmp.v.distanceTo(camera.position));
    tmp.v.project(camera);
    const px = (tmp.v.x + 1) / 2 * w, py = (1 - tmp.v.y) / 2 * h;
    box[0] = Math.min(box[0], px); box[1] = Math.min(box[1], py);
    box[2] = Math.max(box[2], px); box[3] = Math.max(box[3], py);
  }
  const focal = h / 2 / Math.tan(camera.fov * Math.PI / 360);
  const pad = Math.max(dotRadius * (mesh.dots.length > 0), maxTubeRadius) * focal / nearest;
  return box.map((v) => v.toFixed(1)).join(' ') + ' ' + pad.toFixed(1);
}

/* ---- state and controls ---- */

const state = { k: 0, field: null, playing: false, time: 0, last: 0 };
const n = run.frames.length;

function draw() { renderer.render(scene, camera); }

function show(k) {
  state.k = Math.max(0, Math.min(n - 1, k));
  const x = pointsOf(state.k), f = run.frames[state.k];
  placeTubes(x);
  placeCorners(shells, x, mesh.tris);
  shells.geometry.computeVertexNormals();
  placeCorners(lines, x, mesh.lines);
  colourAll(state.field, state.k);
  draw();
  $('slider').value = state.k;
  $('frame').textContent = (state.k + 1) + ' / ' + n;
  $('time').textContent = 't = ' + Number(f.t.toPrecision(4)) + ' s (frame ' + f.index + ' of the series)';
  $('status').textContent = 'frame ' + (state.k + 1) + ' of ' + n + ' drawn';
  $('status').dataset.box = screenBox(x);
}

function chooseField(name) {
  state.field = run.fields.find((f) => f.name === name) || null;
  $('field').value = state.field ? name : '';
  const scale = $('scale');
  scale.style.display = state.field ? 'block' : 'none';
  if (state.field) {
    const f = state.field, stops = RAMP.map((c) => 'rgb(' + c.map((v) => Math.round(255 * v)).join(',') + ')');
    $('ramp').style.background = 'linear-gradient(to top, ' + stops.join(', ') + ')';
    $('hi').textContent = Number(f.hi.toPrecision(3));
    $('lo').textContent = Number(f.lo.toPrecision(3));
    $('unit').textContent = f.name + (f.unit ? ' (' + f.unit + ')' : '') + (f.ncomp > 1 ? ', magnitude' : '');
  }
  show(state.k);
}

/* Playing runs the run's own time at the chosen speed; the last frame ends it. The ticks are
   timers, not animation frames: a headless browser's virtual clock runs timers in its own time
   but animation frames in real time, so a page driven by animation frames, captured by such a
   browser, stopped short of the last frame on a busy machine. */
const TICK_MS = 1000 / 60;

function tick() {
  if (!state.playing) return;
  const now = performance.now();
  const dt = state.last ? (now - state.last) / 1000 : 0;
  state.last = now;
  state.time += dt * Number($('speed').value);
  let k = state.k;
  while (k + 1 < n && run.frames[k + 1].t <= state.time) k++;
  if (k !== state.k) show(k);
  if (k >= n - 1) return setPlaying(false);
  setTimeout(tick, TICK_MS);
}

function setPlaying(on) {
  state.playing = on && n > 1;
  $('play').textContent = state.playing ? 'pause' : 'play';
  if (!state.playing) return;
  if (state.k >= n - 1) show(0);
  state.time = run.frames[state.k].t;
  state.last = 0;
  setTimeout(tick, 0);
}

/* #frame=first|last|N (1 to the number of frames) and field=NAME; without a frame the run plays. */
function applyHash() {
  const args = new URLSearchParams(location.hash.slice(1));
  if (args.has('field')) chooseField(args.get('field'));
  const want = args.get('frame');
  if (want === null) return false;
  setPlaying(false);
  show(want === 'last' ? n - 1 : want === 'first' ? 0 : parseInt(want, 10) - 1);
  return true;
}

/* #size=WxH fixes the drawing's size in CSS pixels whatever the window: a headless browser
   dumping the DOM has a smaller viewport than one taking a screenshot of the same window, and
   the tests compare the two. */
function fixSize() {
  const m = /(?:^|&)size=(\d+)x(\d+)/.exec(location.hash.slice(1));
  if (!m) return;
  view.style.right = view.style.bottom = 'auto';
  view.style.width = m[1] + 'px';
  view.style.height = m[2] + 'px';
}

function setUp() {
  fixSize();
  for (const f of run.fields) $('field').add(new Option(f.name, f.name));
  $('field').addEventListener('change', (e) => chooseField(e.target.value));
  $('slider').max = n - 1;
  $('slider').addEventListener('input', (e) => { setPlaying(false); show(Number(e.target.value)); });
  $('play').addEventListener('click', () => setPlaying(!state.playing));
  window.addEventListener('hashchange', applyHash);
  window.addEventListener('resize', fit);
  fit();
  show(0);
  if (!applyHash()) setPlaying(true);
}

/* The camera of srdc render's pictures: the run's bounding sphere fits the narrower field of
   view, with a margin, seen along the fitted direction; or the model's `view` block's eye, when
   it gives one (cam.distance: from the eye to the point it looks at). */
function fit() {
  const w = view.clientWidth, h = view.clientHeight, aspect = w / h, half = cam.fov * Math.PI / 360;
  const narrow = aspect >= 1 ? half : Math.atan(Math.tan(half) * aspect);
  const dist = cam.distance > 0 ? cam.distance : 1.08 * cam.radius / Math.sin(narrow);
  if (!controls.fitted) {
    camera.position.fromArray(cam.centre).addScaledVector(new THREE.Vector3().fromArray(cam.dir), -dist);
    controls.target.fromArray(cam.centre);
    controls.fitted = true;
  }
  camera.aspect = aspect;
  camera.updateProjectionMatrix();
  renderer.setSize(w, h);
  controls.update();
  if ($('status').dataset.box) show(state.k);
}

const controls = new OrbitControls(camera, renderer.domElement);
controls.addEventListener('change', draw);
setUp();
