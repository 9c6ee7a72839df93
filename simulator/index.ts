import { answerControl, maskPushToken } from './control-api.js';
import type { ControlAccountState, ControlState, ControlTarget } from './control-api.js';
import { deliverToTargets, leadingResult } from './delivery.js';
import { createRequestHandler } from './dispatch.js';
import type { DispatchContext } from './dispatch.js';
import { DeviceNotListed, setDeviceHealth } from './device-list.js';
import { UnknownAccount } from './unknown-account.js';
import { FaultQueue } from './faults.js';
import { isLoopbackHost } from './loopback.js';
import { Recorder } from './recorder.js';
import { listen } from './servers.js';
import type { ListeningServer } from './servers.js';
import { ServiceState } from './state.js';
import type {
  AccountDelivery,
  Chaos,
  DeliveryResult,
  DeviceHealth,
  DeviceListMode,
  Fault,
  MotionOptions,
  RecordedRequest,
  RouteName,
  SimulatedAccountSetup,
  SimulatedAccountState,
  SimulatedService,
  Simulator,
  SimulatorOptions,
} from './types.js';

export type * from './types.js';
export { DeliveryError } from './delivery.js';
export { SAMPLE_DEVICES } from './device-list.js';
export type { ControlAccountState, ControlState } from './control-api.js';
export { UnknownAccount } from './unknown-account.js';

const DEFAULT_HOST = '127.0.0.1';

/** In listening order. */
const SERVICES: readonly SimulatedService[] = ['account', 'region', 'doorbell'];

/** Starts the three loopback servers of the simulated account, regional and doorbell services. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const host = options.host ?? DEFAULT_HOST;
  if (!isLoopbackHost(host)) {
    throw new Error(`the simulator binds to loopback addresses only, not ${host}`);
  }
  const { latencyMs } = options;
  if (latencyMs !== undefined && !(Number.isFinite(latencyMs) && latencyMs >= 0)) {
    throw new TypeError('latencyMs must be a number >= 0');
  }
  const simulator = new LocalSimulator(options);
  await simulator.listen(host, options.ports ?? {});
  return simulator;
}

class LocalSimulator implements Simulator, ControlTarget {
  private readonly state: ServiceState;
  private readonly recorder: Recorder;
  private readonly faults = new FaultQueue();
  /** Aborted by close(): ends fault delays and deliveries still in flight. */
  private readonly closing = new AbortController();
  private readonly servers = new Map<SimulatedService, ListeningServer>();

  constructor(private readonly options: SimulatorOptions) {
    this.state = new ServiceState(options.doorbells, options.devices, options.deviceListMode);
    this.recorder = new Recorder(options.onRequest);
    for (const account of options.accounts ?? []) {
      this.state.addAccount(account);
    }
  }

  async listen(host: string, ports: Partial<Record<SimulatedService, number>>): Promise<void> {
    const context: DispatchContext = {
      recorder: this.recorder,
      faults: this.faults,
      latencyMs: this.options.latencyMs ?? 0,
      routeContext: () => ({ state: this.state, regionalUrl: this.options.regionUrlOverride ?? this.regionUrl }),
      signal: this.closing.signal,
      control: (request) => answerControl(request, this),
    };
    try {
      for (const service of SERVICES) {
        this.servers.set(service, await listen(host, ports[service] ?? 0, createRequestHandler(service, context)));
      }
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  get accountUrl(): string {
    return this.urlOf('account');
  }

  get regionUrl(): string {
    return this.urlOf('region');
  }

  get doorbellUrl(): string {
    return this.urlOf('doorbell');
  }

  private urlOf(service: SimulatedService): string {
    const server = this.servers.get(service);
    if (server === undefined) {
      throw new Error(`the ${service} server is not listening`);
    }
    return server.url;
  }

  get requests(): RecordedRequest[] {
    return this.recorder.requests;
  }

  requestsTo(route: RouteName): RecordedRequest[] {
    return this.recorder.requestsTo(route);
  }

  invalidRequests(): RecordedRequest[] {
    return this.recorder.invalidRequests();
  }

  addAccount(account: SimulatedAccountSetup): SimulatedAccountState {
    return this.state.addAccount(account);
  }

  accounts(): SimulatedAccountState[] {
    return this.state.accountSnapshots();
  }

  account(email: string): SimulatedAccountState | undefined {
    return this.state.accountSnapshot(email);
  }

  revokeAccount(email: string): void {
    if (!this.state.revokeAccountTokens(email)) {
      throw new UnknownAccount(email);
    }
  }

  requestsOf(email: string): RecordedRequest[] {
    const wanted = email.toLowerCase();
    return this.recorder.requests.filter((request) => request.account?.toLowerCase() === wanted);
  }

  injectFault(route: RouteName, fault: Fault): void {
    this.faults.add(route, fault);
  }

  injectChaos(chaos: Chaos): void {
    this.faults.setChaos(chaos);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  get issuedTokens(): readonly string[] {
    return this.state.issuedTokens;
  }

  revokeToken(token: string): void {
    this.state.revokeToken(token);
  }

  setDeviceListMode(mode: DeviceListMode): void {
    this.state.deviceListMode = mode;
  }

  /**
   * What the device list says of doorbell `deviceId` from now on: its battery (`battery_life`, null
   * for a wired doorbell) and `alerts.connection`; a key left undefined stays as it was. Throws for
   * a doorbell the list does not hold.
   */
  setDoorbellHealth(deviceId: string, health: DeviceHealth): void {
    // A doorbell in several accounts' lists is one device: every list says the same of it.
    const changed = this.state.deviceLists.map((devices) => setDeviceHealth(devices, deviceId, health));
    if (!changed.includes(true)) {
      throw new DeviceNotListed(deviceId);
    }
  }

  get secrets(): string[] {
    return this.state.secrets;
  }

  get pushToken(): string | undefined {
    return this.state.pushToken;
  }

  get subscribedDoorbells(): ReadonlySet<string> {
    return this.state.subscribedDoorbells;
  }

  async deliverMotion(deviceId: string, options: MotionOptions = {}): Promise<DeliveryResult> {
    return leadingResult(await this.deliverMotionEach(deviceId, options));
  }

  async deliverMotionEach(deviceId: string, options: MotionOptions = {}): Promise<AccountDelivery[]> {
    return deliverToTargets(this.state.deliveryTargets(deviceId), deviceId, options, this.closing.signal);
  }

  accountsState(): ControlAccountState[] {
    return this.state.accountSnapshots().map((account) => ({
      email: account.email,
      doorbells: account.doorbells === undefined ? null : [...account.doorbells],
      sessions: account.tokens.length - account.revokedTokens.length,
      revokedSessions: account.revokedTokens.length,
      pushToken: maskPushToken(account.pushToken),
      subscribedDoorbells: [...account.subscribedDoorbells],
      requestCounts: this.recorder.countsByRoute(this.requestsOf(account.email)),
    }));
  }

  controlState(): ControlState {
    return {
      pushToken: maskPushToken(this.state.pushToken),
      subscribedDoorbells: [...this.state.subscribedDoorbells],
      deviceListMode: this.state.deviceListMode,
      requestCounts: this.recorder.countsByRoute(),
      invalidRequests: this.recorder.invalidRequests().length,
    };
  }

  reset(): void {
    this.recorder.clear();
  }

  closeIdleConnections(): void {
    this.servers.forEach((server) => server.closeIdle());
  }

  async close(): Promise<void> {
    this.closing.abort();
    await Promise.all([...this.servers.values()].map((server) => server.close()));
  }
}
