import { abortable, SharedAnswers } from './shared-answers';

describe('SharedAnswers', () => {
  it('asks once per key within the TTL, and again after it', async () => {
    const answers = new SharedAnswers(40);
    let asked = 0;
    const fetch = async () => ++asked;
    await expect(Promise.all([answers.remembered('k', fetch), answers.remembered('k', fetch)])).resolves.toEqual([1, 1]);
    await expect(answers.remembered('other', fetch)).resolves.toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(answers.remembered('k', fetch)).resolves.toBe(3);
  });

  it('reuses a failure for the TTL without an unhandled rejection', async () => {
    const answers = new SharedAnswers(1000);
    let asked = 0;
    const fetch = () => Promise.reject(new Error(`failed ${++asked}`));
    await expect(answers.remembered('k', fetch)).rejects.toThrow('failed 1');
    await expect(answers.remembered('k', fetch)).rejects.toThrow('failed 1');
  });
});

describe('abortable', () => {
  it('rejects with the reason when the caller aborts, while the answer goes on', async () => {
    const controller = new AbortController();
    let settle!: (value: string) => void;
    const answer = new Promise<string>((resolve) => (settle = resolve));
    const waiting = abortable(answer, controller.signal);
    controller.abort(new Error('caller left'));
    await expect(waiting).rejects.toThrow('caller left');
    settle('done');
    await expect(answer).resolves.toBe('done');
  });
});
