import { InvalidRequestError } from '../errors';
import { checkMessages } from './message-checks';

const problem = (messages: unknown) => {
  try {
    checkMessages(messages);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return (error as Error).message;
  }
};

describe('checkMessages', () => {
  it('accepts each role in its documented shape', () => {
    expect(
      problem([
        { role: 'system', content: 's' },
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', image: { kind: 'base64', mediaType: 'image/png', data: 'AA==' } }] },
        { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'c1', content: 'ok' },
      ]),
    ).toBeUndefined();
  });

  it('names the message and field at fault', () => {
    expect(problem([])).toBe('messages must be a non-empty array');
    expect(problem([null])).toBe('messages[0] must be an object');
    expect(problem([{ role: 'user', content: 'a' }, { role: 'robot', content: 'b' }])).toBe('messages[1].role must be one of system, user, assistant, tool');
    expect(problem([{ role: 'user', content: [{ type: 'image', image: { kind: 'url', url: 'ftp://x' } }] }])).toBe('messages[0].content[0].image.url must be an http(s) URL');
    expect(problem([{ role: 'assistant', content: null }])).toBe('messages[0].content must be a string (null only beside toolCalls)');
    expect(problem([{ role: 'tool', content: 'x' }])).toBe('messages[0].toolCallId must name the tool call this message answers');
  });
});
